import { UsageError } from "./command-line.js";

/** A TCP address to listen on or connect to. */
export interface HostPort {
  /** Host name or IP address (an IPv6 address without its brackets). */
  host: string;
  /** TCP port, 0 to 65 535. */
  port: number;
}

const hostPortPattern = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/;

/**
 * Reads `HOST:PORT` (`[v6-address]:PORT` for an IPv6 address), as `--tls` or `--connect` take it.
 *
 * @param flag - the flag, for the message
 * @param value - what was given
 * @throws UsageError (`ERR_X_USAGE`) when it is not a host and a port from 0 to 65 535
 */
export function parseHostPort(flag: string, value: string): HostPort {
  const match = hostPortPattern.exec(value);
  const port = Number(match?.[3]);
  if (match === null || port > 65_535)
    throw new UsageError(`${flag}: ${JSON.stringify(value)} is not HOST:PORT (or [IPv6]:PORT)`);
  return { host: (match[1] ?? match[2]) as string, port };
}

/**
 * Reads the address of a daemon's HTTP listener (`--http`, `--metrics`): `HOST:PORT`, `[v6-address]:PORT`,
 * or a bare `PORT` on the loopback address `127.0.0.1`.
 *
 * @param flag - the flag, for the message
 * @param value - what was given
 * @throws UsageError (`ERR_X_USAGE`) otherwise
 */
export function parseListenAddress(flag: string, value: string): HostPort {
  try {
    return parseHostPort(flag, /^[0-9]{1,5}$/.test(value) ? `127.0.0.1:${value}` : value);
  } catch {
    // Named as given: a bad bare port is not shown as the 127.0.0.1:PORT it stood for.
    throw new UsageError(
      `${flag}: ${JSON.stringify(value)} is not HOST:PORT, [IPv6]:PORT or a bare PORT (0 to 65 535)`,
    );
  }
}
