import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HostPort } from "./host-port.js";
import type { Logger } from "./logger.js";
import { servedHostNames, servesHost } from "./served-hosts.js";

/** What a {@link ReadOnlyHttpServer} route answers. */
export interface HttpAnswer {
  /** HTTP status. Default 200. */
  status?: number;
  /** The `content-type` header. */
  type: string;
  body: string;
  /** More response headers. */
  headers?: Record<string, string>;
}

/** Where a {@link ReadOnlyHttpServer} listens, and the host names it answers for. */
export interface ReadOnlyHttpAddress extends HostPort {
  /**
   * Host names (without a port) that clients may name in the `Host` header besides `localhost`, `host` and
   * IP addresses: a reverse proxy's or the machine's DNS name. Any other name is answered 421. Default none.
   */
  allowedHosts?: readonly string[];
}

/** Answers one `GET` (or `HEAD`) by its URL; a rejection answers 500 and is logged. */
export type HttpRoutes = (url: URL) => HttpAnswer | Promise<HttpAnswer>;

const plainText = "text/plain; charset=utf-8";

/** A plain-text answer (`404` with a hint of the paths there are, `503` while stopping, …). */
export function textAnswer(status: number, body: string): HttpAnswer {
  return { status, type: plainText, body };
}

/**
 * A daemon's read-only HTTP listener (a status page, Prometheus metrics): `GET` and `HEAD` only (405
 * otherwise), never cached (`cache-control: no-store`), with bounded header, request and keep-alive times so
 * that idle or slow clients cannot pile up. It has no authentication: keep it on loopback, or behind a reverse
 * proxy that authenticates. It answers only requests whose `Host` header is an IP address, `localhost`, the host
 * it listens on or one of `allowedHosts` (421 Misdirected Request otherwise), so that a web page in a browser on
 * the same machine cannot read it under a name of its own through DNS rebinding.
 */
export class ReadOnlyHttpServer {
  readonly #server: Server;
  readonly #address: HostPort;

  /**
   * @param address - where to listen; port 0 picks a free one (see {@link ReadOnlyHttpServer.address})
   *   and the host names it answers for
   * @param routes - answers each request
   * @param logger - where a failing route is logged, and a request for another host at debug level
   */
  constructor(address: ReadOnlyHttpAddress, routes: HttpRoutes, logger: Logger) {
    this.#address = { host: address.host, port: address.port };
    const served = servedHostNames(address.host, address.allowedHosts);
    // Loaded here, not imported: an ESM import of node:http also loads Node's fetch (undici), about 15 ms that
    // every command importing @x/core/internal would pay at startup, HTTP listener or not.
    const { createServer } = process.getBuiltinModule("node:http");
    this.#server = createServer((request, response) => {
      if (!servesHost(request.headers.host, served)) {
        logger.debug({ host: request.headers.host, url: request.url }, "HTTP request for another host: 421");
        response.writeHead(421, { "content-type": plainText, "cache-control": "no-store" });
        response.end("misdirected request: this server does not answer for that host name\n");
        return;
      }
      answer(request, response, routes).catch((error: unknown) => {
        logger.error({ err: error, url: request.url }, "HTTP request failed");
        if (!response.headersSent) response.writeHead(500, { "content-type": plainText });
        response.end("internal error\n");
      });
    });
    this.#server.keepAliveTimeout = 5_000;
    this.#server.headersTimeout = 10_000;
    this.#server.requestTimeout = 10_000;
  }

  /** Listens; rejects when the address cannot be bound (`EADDRINUSE`, `EACCES`, …). */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(this.#address.port, this.#address.host, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
  }

  /** The host it was given and the port it listens on (the actual one after port 0). */
  address(): HostPort {
    const { port } = this.#server.address() as AddressInfo;
    return { host: this.#address.host, port };
  }

  /** Stops listening and ends open connections; idempotent. */
  close(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

async function answer(request: IncomingMessage, response: ServerResponse, routes: HttpRoutes): Promise<void> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { allow: "GET, HEAD", "content-type": plainText });
    response.end("read-only: GET or HEAD\n");
    return;
  }
  const { status = 200, type, body, headers } = await routes(new URL(request.url ?? "/", "http://localhost"));
  response.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers });
  response.end(request.method === "HEAD" ? undefined : body);
}
