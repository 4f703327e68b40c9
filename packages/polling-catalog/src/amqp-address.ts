import { splitUrls } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "./errors.js";
import { redactUrl } from "./redact.js";

/** The AMQP heartbeat, in seconds, unless the URL sets `heartbeat`. */
const defaultHeartbeatSeconds = 60;

/**
 * The AMQP URL to connect to: an `amqp:`/`amqps:` URL as given, `host[:port]` as `amqp://host[:port]`, or
 * the catalog server's host without its port when `amqpServer` is absent. A `heartbeat=60` parameter is
 * added unless the URL has one.
 *
 * @param amqpServer - the `amqpServer` option
 * @param catalogServer - the catalog's `server` option (`host` or `host:port`)
 */
export function amqpUrlFor(amqpServer: string | undefined, catalogServer: string): string {
  const address = amqpServer ?? hostWithoutPort(catalogServer);
  let url: URL;
  try {
    url = new URL(address.includes("://") ? address : `amqp://${address}`);
  } catch {
    // No cause: URL's TypeError keeps the whole input, password included, in its `input` property.
    throw badAmqpServer(amqpServer);
  }
  if ((url.protocol !== "amqp:" && url.protocol !== "amqps:") || url.hostname === "")
    throw badAmqpServer(amqpServer);
  if (!url.searchParams.has("heartbeat")) url.searchParams.set("heartbeat", String(defaultHeartbeatSeconds));
  return url.href;
}

/**
 * The AMQP URLs of the `amqpServer` option, in order: each address of a list, or of a string that separates
 * several with white space (the nodes of a cluster), read by {@link amqpUrlFor}; the catalog server's host
 * when the option is absent.
 *
 * @param amqpServer - the `amqpServer` option: one address, several separated by spaces, or a list
 * @param catalogServer - the catalog's `server` option (`host` or `host:port`)
 * @throws `ERR_X_POLLING_CATALOG_INVALID_OPTION` naming the first bad address (its password as `***`), or
 *   when there is no address at all
 */
export function amqpUrlsFor(
  amqpServer: string | readonly string[] | undefined,
  catalogServer: string,
): string[] {
  if (amqpServer === undefined) return [amqpUrlFor(undefined, catalogServer)];
  const given = typeof amqpServer === "string" ? [amqpServer] : amqpServer;
  const split = given.map(splitUrls);
  const addresses = split.flat();
  if (addresses.length === 0 || split.some((part) => part.length === 0))
    throw new PollingCatalogError(
      ErrorCode.INVALID_OPTION,
      // Not echoed: the other addresses may hold passwords.
      "invalid option amqpServer: no address, or a blank one (expected a host, host:port or an amqp:// or amqps:// URL, or several of them)",
    );
  return addresses.map((address) => amqpUrlFor(address, catalogServer));
}

function hostWithoutPort(server: string): string {
  if (server.startsWith("[")) return server.slice(0, server.indexOf("]") + 1);
  const colon = server.indexOf(":");
  return colon === -1 || server.indexOf(":", colon + 1) !== -1 ? server : server.slice(0, colon);
}

function badAmqpServer(value: string | undefined): PollingCatalogError {
  const shown = value === undefined ? "undefined" : JSON.stringify(redactAddress(value));
  return new PollingCatalogError(
    ErrorCode.INVALID_OPTION,
    `invalid option amqpServer: ${shown} (expected a host, host:port or an amqp:// or amqps:// URL, or several of them)`,
  );
}

/** `amqpServer` as given, its password shown as `***` (read as `amqp://<value>` when it has no scheme). */
function redactAddress(value: string): string {
  if (value.includes("://")) return redactUrl(value);
  return redactUrl(`amqp://${value}`).slice("amqp://".length);
}
