import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@x/core";
import { z } from "zod";
import type { SupervisorMetrics } from "./metrics.js";
import { pageSecurityHeaders, renderQueuePage } from "./queue-page.js";
import type { SqlReader } from "./queue-reader.js";
import { readQueueViewWith } from "./queue-view.js";

/** Where and how `serve --http` serves its page (`http` in the API). */
export interface HttpEndpoint {
  /** Host name or IP address to listen on. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** TCP port; `0` picks a free one, see `Supervisor.httpAddress()`. */
  port: number;
  /** How often the page refreshes itself when JavaScript is on, in ms. Default 5 000. */
  refreshMs?: number;
  /** Queue entries per page, 1 to 1 000. Default 100. */
  pageSize?: number;
}

/** An integer from `min` to `max`; `what` names it in the error. */
const integer = (min: number, max: number, what: string) => {
  const error = `${what} (integer ${min} to ${max})`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};

/** The schema of {@link HttpEndpoint}. */
export const httpEndpointSchema = z.strictObject({
  host: z.string({ error: "a host name or IP address" }).min(1).default("127.0.0.1"),
  port: integer(0, 65_535, "a TCP port"),
  refreshMs: integer(500, 3_600_000, "a refresh interval in ms").default(5_000),
  pageSize: integer(1, 1_000, "a page size").default(100),
});

/** What the HTTP listener reads from. */
export interface HttpSource {
  /** Where the queue's queries run (the daemon's read thread). */
  reader: () => SqlReader;
  /** Whether the database has the TLS job holders table. */
  holders: () => boolean;
  metrics: SupervisorMetrics;
  /** The daemon is stopping: answer 503. */
  closed: () => boolean;
}

/** The page number of a `?page=N` query: a positive integer, else 1. */
function pageOf(url: URL): number {
  const page = Number(url.searchParams.get("page") ?? "1");
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/**
 * The daemon's read-only HTTP listener: `/` (the queue page), `/queue.json` (the same data) and `/metrics`
 * (Prometheus text format). It answers from the daemon's own connection and event loop with bounded queries
 * (one page, `LIMIT`ed lists, counts), so workers keep being served between requests. No authentication:
 * keep it on loopback, or behind a reverse proxy that authenticates.
 */
export class HttpListener {
  #server: Server;
  #endpoint: z.output<typeof httpEndpointSchema>;

  constructor(endpoint: z.output<typeof httpEndpointSchema>, source: HttpSource, logger: Logger) {
    this.#endpoint = endpoint;
    const headers = pageSecurityHeaders(endpoint.refreshMs);
    this.#server = createServer((request, response) => {
      this.#handle(request, response, source, headers).catch((error: unknown) => {
        logger.error({ err: error, url: request.url }, "HTTP request failed");
        if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        response.end("internal error\n");
      });
    });
    this.#server.keepAliveTimeout = 5_000;
    this.#server.headersTimeout = 10_000;
    this.#server.requestTimeout = 10_000;
  }

  /** Listens; rejects when the address cannot be bound. */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(this.#endpoint.port, this.#endpoint.host, () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
  }

  /** The address and actual port. */
  address(): { host: string; port: number } {
    const { port } = this.#server.address() as AddressInfo;
    return { host: this.#endpoint.host, port };
  }

  /** Stops listening and ends open connections; idempotent. */
  close(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #handle(
    request: IncomingMessage,
    response: ServerResponse,
    { reader, holders, metrics, closed }: HttpSource,
    headers: Record<string, string>,
  ): Promise<void> {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" });
      response.end("read-only: GET or HEAD\n");
      return;
    }
    const send = (status: number, type: string, body: string, extra: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": type, "cache-control": "no-store", ...extra });
      response.end(request.method === "HEAD" ? undefined : body);
    };
    if (closed()) {
      send(503, "text/plain; charset=utf-8", "the daemon is stopping\n");
      return;
    }
    const view = () =>
      readQueueViewWith(reader(), holders(), { page: pageOf(url), pageSize: this.#endpoint.pageSize });
    switch (url.pathname) {
      case "/":
      case "/queue.html":
        send(
          200,
          "text/html; charset=utf-8",
          renderQueuePage(await view(), this.#endpoint.refreshMs),
          headers,
        );
        return;
      case "/queue.json":
        send(200, "application/json; charset=utf-8", `${JSON.stringify(await view())}\n`);
        return;
      case "/metrics":
        send(200, metrics.registry.contentType, await metrics.metrics());
        return;
      default:
        send(404, "text/plain; charset=utf-8", "not found: try /, /queue.json or /metrics\n");
    }
  }
}
