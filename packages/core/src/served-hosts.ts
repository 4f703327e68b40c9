import { UsageError } from "./command-line.js";
import * as v from "./schema/v.js";

/** A DNS host name: dot-separated labels of letters, digits, `-` and `_`, at most 253 characters, no port. */
const hostNamePattern =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

const hostNameWords = "a host name (letters, digits, '-', '_' and dots, without a port)";

/**
 * The schema of the `allowedHosts` option of a daemon's HTTP listener: host names (without a port) that its
 * clients may name in the `Host` header, besides the ones it always answers for (`localhost`, the address
 * it listens on, and any IP address).
 * Default `[]`.
 */
export const allowedHostsSchema = v
  .array(v.string({ error: hostNameWords }).regex(hostNamePattern, { error: hostNameWords }), {
    error: `a list of host names`,
  })
  .max(1_000, { error: "at most 1000 host names" })
  .default([]);

/**
 * Reads a host name given on the command line (`--http-host NAME`, `--metrics-host NAME`), as
 * {@link allowedHostsSchema} takes it.
 *
 * @param flag - the flag, for the message
 * @param value - what was given
 * @throws UsageError (`ERR_X_USAGE`) when it is not a host name (a port, a scheme or a path included)
 */
export function parseHostName(flag: string, value: string): string {
  if (!hostNamePattern.test(value)) {
    throw new UsageError(`${flag}: ${JSON.stringify(value)} is not ${hostNameWords}`);
  }
  return value;
}

/** One host name in the form {@link servesHost} compares: lower case, without a final dot. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/**
 * The host names a listener answers for: `localhost`, the host it listens on, and `allowedHosts`.
 *
 * @param bindHost - the address or name it listens on
 * @param allowedHosts - names its clients may use besides (a reverse proxy's, a DNS name of the machine)
 */
export function servedHostNames(bindHost: string, allowedHosts: readonly string[] = []): ReadonlySet<string> {
  return new Set(["localhost", bindHost, ...allowedHosts].map(normalize));
}

/**
 * Whether a request's `Host` header names this listener. An IP address (`127.0.0.1:9180`, `[::1]:9180`) and
 * a name of `served` (`localhost:9180`) are; any other name is not, whatever its port: a page a browser loaded
 * from another site can reach a loopback listener under its own site's name, through DNS rebinding, and that
 * name is never one of `served`. A request without `Host` (HTTP/1.0) comes from no browser, and is served.
 *
 * @param host - the `Host` header, or `undefined` when there is none
 * @param served - from {@link servedHostNames}
 */
export function servesHost(host: string | undefined, served: ReadonlySet<string>): boolean {
  if (host === undefined) return true;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*))(?::[0-9]{0,5})?$/.exec(host.trim());
  if (match === null) return false;
  // Loaded here, not imported: the package's import stays free of node:net (see read-only-http.ts).
  const { isIP } = process.getBuiltinModule("node:net");
  if (match[1] !== undefined) return isIP(match[1]) === 6;
  const name = match[2]!;
  return isIP(name) === 4 || served.has(normalize(name));
}
