import { inspect } from "node:util";
import { expect } from "vitest";

/** Distinctive secrets: a test fails if any of them shows up anywhere. */
export const secrets = {
  cookie: "webauthn=cookie-SECRET-5a1t",
  bearerToken: "token-SECRET-b3ar3r",
  amqpPassword: "amqp-SECRET-pa55",
} as const;

const needles = [secrets.cookie, "cookie-SECRET", secrets.bearerToken, secrets.amqpPassword, "SECRET"];

/**
 * Every way a value gets printed: `util.inspect` (default, and with `depth: Infinity` and `showHidden`),
 * `JSON.stringify`, `String()` and a template literal; for an error also its `message`, `stack` and `cause`
 * chain.
 */
export function renderings(value: unknown): string[] {
  const out = [
    inspect(value),
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true, getters: true }),
  ];
  try {
    out.push(JSON.stringify(value) ?? "");
  } catch (error) {
    out.push(String(error));
  }
  try {
    out.push(String(value), `${value}`);
  } catch {
    // A null-prototype object has no toString: nothing printed.
  }
  let current: unknown = value;
  for (let depth = 0; current instanceof Error && depth < 8; depth++) {
    out.push(current.message, current.stack ?? "", inspect(current, { depth: Number.POSITIVE_INFINITY }));
    current = current.cause;
  }
  return out;
}

/** Asserts that no rendering of any of `values` contains a secret. */
export function expectNoSecret(...values: unknown[]): void {
  for (const value of values)
    for (const text of renderings(value))
      for (const needle of needles)
        expect(text, `found ${needle} in: ${text.slice(0, 2000)}`).not.toContain(needle);
}
