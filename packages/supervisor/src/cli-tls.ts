import { parseHostPort, UsageError } from "@x/core/internal";
import type { TlsEndpoint } from "./tls-endpoint.js";

/** The command-line options that name a TLS certificate, key and CA, shared by `serve` and `worker`. */
export const tlsFileOptions = {
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-ca": { type: "string" },
} as const;

/** Usage lines of {@link tlsFileOptions}. */
export const tlsFileUsage = `  --tls-cert FILE         this side's certificate (PEM)
  --tls-key FILE          its private key (PEM, unencrypted)
  --tls-ca FILE           the CA certificate the other side's certificate must be signed by (PEM)`;

/**
 * The TLS endpoint of a command line: `address` (`HOST:PORT`) with `--tls-cert`, `--tls-key` and `--tls-ca`,
 * all required together.
 *
 * @param flag - the flag that gave the address, for messages
 * @param address - `HOST:PORT`
 * @param values - the parsed flags
 * @throws UsageError when a file flag is missing or the address is malformed
 */
export function tlsEndpointFromFlags(
  flag: string,
  address: string,
  values: { "tls-cert"?: string | undefined; "tls-key"?: string | undefined; "tls-ca"?: string | undefined },
): TlsEndpoint {
  const missing = (["tls-cert", "tls-key", "tls-ca"] as const).filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`${flag} needs ${missing.map((name) => `--${name}`).join(", ")}`);
  }
  return {
    ...parseHostPort(flag, address),
    certFile: values["tls-cert"]!,
    keyFile: values["tls-key"]!,
    caFile: values["tls-ca"]!,
  };
}

/** Refuses TLS file flags given without the flag that turns TLS on. */
export function refuseStrayTlsFlags(
  flag: string,
  values: { "tls-cert"?: string | undefined; "tls-key"?: string | undefined; "tls-ca"?: string | undefined },
): void {
  const stray = (["tls-cert", "tls-key", "tls-ca"] as const).filter((name) => values[name] !== undefined);
  if (stray.length > 0) throw new UsageError(`--${stray[0]} needs ${flag}`);
}
