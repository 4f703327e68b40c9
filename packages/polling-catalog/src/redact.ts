import { redactedMark } from "@x/core/internal";

export { inspectAs, redactedMark, redactUrl } from "@x/core/internal";

/** Credential fragments shorter than this are not searched for: they would match ordinary text. */
const minSecretLength = 6;

/**
 * The strings to mask wherever a server might echo them: each credential whole, and each value of a
 * `Cookie` header (`name=value; …`), all at least 6 characters long, longest first.
 *
 * @param credentials - the cookie and the bearer token, when set
 */
export function secretsOf(credentials: {
  cookie?: string | undefined;
  bearerToken?: string | undefined;
}): string[] {
  const found = new Set<string>();
  if (credentials.bearerToken !== undefined) found.add(credentials.bearerToken);
  if (credentials.cookie !== undefined) {
    found.add(credentials.cookie);
    for (const pair of credentials.cookie.split(";")) found.add(pair.slice(pair.indexOf("=") + 1).trim());
  }
  return [...found].filter((secret) => secret.length >= minSecretLength).sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each of `secrets` replaced by `***`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  for (const secret of secrets) if (masked.includes(secret)) masked = masked.replaceAll(secret, redactedMark);
  return masked;
}
