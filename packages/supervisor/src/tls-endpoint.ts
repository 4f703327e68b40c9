import type { SecureContextOptions } from "node:tls";
import { v } from "@x/core/internal";
import { ErrorCode, SupervisorError } from "./errors.js";

/**
 * A TLS address with mutual authentication: where the daemon listens (`startSupervisor({ tls })`) or where a
 * worker connects (`runWorker({ tls })`, `SupervisorClient.connect`). Both sides present a certificate signed
 * by the CA in `caFile` and accept only a peer whose certificate it signed. The files are PEM, read when the
 * listener starts (and again on `reloadTls()`) or at every connection attempt.
 */
export interface TlsEndpoint {
  /** Host name or IP address: the address to listen on, or the daemon to connect to. */
  host: string;
  /** TCP port; `0` (listening only) picks a free one, see `Supervisor.tlsAddress()`. */
  port: number;
  /** This side's certificate (PEM), with its intermediate certificates after it if there are any. */
  certFile: string;
  /** This side's private key (PEM, unencrypted). */
  keyFile: string;
  /** The CA certificate(s) (PEM) that the peer's certificate must be signed by. */
  caFile: string;
}

/** Oldest TLS version either side speaks. */
export const minTlsVersion = "TLSv1.2";

const file = (what: string) =>
  v.string({ error: `a ${what} file path (string)` }).min(1, { error: `a non-empty ${what} file path` });

/** The schema of {@link TlsEndpoint}, for the options of the daemon, the client and the worker. */
export const tlsEndpointSchema = v.strictObject({
  host: v.string({ error: "a host name or IP address" }).min(1, { error: "a non-empty host" }),
  port: v
    .number({ error: "a TCP port (integer 0 to 65535)" })
    .int({ error: "a TCP port (integer 0 to 65535)" })
    .min(0, { error: "a TCP port (integer 0 to 65535)" })
    .max(65_535, { error: "a TCP port (integer 0 to 65535)" }),
  certFile: file("certificate"),
  keyFile: file("private key"),
  caFile: file("CA certificate"),
});

/**
 * Reads the certificate, key and CA of `endpoint`, and checks that they make a usable context (the key matches
 * the certificate, every file is PEM).
 *
 * @throws SupervisorError `ERR_X_SUPERVISOR_TLS` naming the file that cannot be read, or what does not fit
 */
export async function readTlsFiles(
  endpoint: Pick<TlsEndpoint, "certFile" | "keyFile" | "caFile">,
): Promise<Required<Pick<SecureContextOptions, "cert" | "key" | "ca">>> {
  const read = async (path: string, what: string) => {
    try {
      // node:fs/promises is loaded here, not imported: it costs milliseconds at the package's import (issue #31).
      return await process.getBuiltinModule("node:fs/promises").readFile(path);
    } catch (error) {
      throw new SupervisorError(ErrorCode.TLS, `cannot read the TLS ${what} ${path}`, { cause: error });
    }
  };
  const [cert, key, ca] = await Promise.all([
    read(endpoint.certFile, "certificate"),
    read(endpoint.keyFile, "private key"),
    read(endpoint.caFile, "CA certificate"),
  ]);
  try {
    // node:tls is loaded here, not imported: importing it costs milliseconds at the package's import (issue #31).
    process.getBuiltinModule("node:tls").createSecureContext({ cert, key, ca, minVersion: minTlsVersion });
  } catch (error) {
    throw new SupervisorError(
      ErrorCode.TLS,
      `the TLS files ${endpoint.certFile}, ${endpoint.keyFile} and ${endpoint.caFile} do not make a usable context: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
  return { cert, key, ca };
}

/**
 * A certificate subject on one line, in the order the certificate lists it: `O=example, CN=worker-1`.
 *
 * @param subject - `X509Certificate.subject` (one `KEY=value` per line)
 */
export function formatSubject(subject: string): string {
  return subject.split("\n").join(", ");
}
