import type { Logger } from "@x/core";
import { allowedHostsSchema, durationMs, ReadOnlyHttpServer, textAnswer, v } from "@x/core/internal";
import type { SupervisorMetrics } from "./metrics.js";
import { integer } from "./option-schemas.js";
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
  /**
   * Host names (without a port) that browsers and proxies may name in the `Host` header besides `localhost`,
   * `host` and IP addresses, such as the machine's DNS name or a reverse proxy's. A request for any other
   * name is answered 421, so that a web page cannot read the queue through DNS rebinding. Default none.
   */
  allowedHosts?: string[];
}

/** The schema of {@link HttpEndpoint}. */
export const httpEndpointSchema = v.strictObject({
  host: v.string({ error: "a host name or IP address" }).min(1).default("127.0.0.1"),
  port: integer(0, 65_535, "a TCP port"),
  refreshMs: durationMs({ min: 500, max: 3_600_000, integer: true }).default(5_000),
  pageSize: integer(1, 1_000, "a page size").default(100),
  allowedHosts: allowedHostsSchema,
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
export function httpListener(
  endpoint: v.Output<typeof httpEndpointSchema>,
  { reader, holders, metrics, closed }: HttpSource,
  logger: Logger,
): ReadOnlyHttpServer {
  const headers = pageSecurityHeaders(endpoint.refreshMs);
  const view = (url: URL) =>
    readQueueViewWith(reader(), holders(), { page: pageOf(url), pageSize: endpoint.pageSize });
  return new ReadOnlyHttpServer(
    endpoint,
    async (url) => {
      if (closed()) return textAnswer(503, "the daemon is stopping\n");
      switch (url.pathname) {
        case "/":
        case "/queue.html":
          return {
            type: "text/html; charset=utf-8",
            body: renderQueuePage(await view(url), endpoint.refreshMs),
            headers,
          };
        case "/queue.json":
          return { type: "application/json; charset=utf-8", body: `${JSON.stringify(await view(url))}\n` };
        case "/metrics":
          return { type: metrics.registry.contentType, body: await metrics.metrics() };
        default:
          return textAnswer(404, "not found: try /, /queue.json or /metrics\n");
      }
    },
    logger,
  );
}
