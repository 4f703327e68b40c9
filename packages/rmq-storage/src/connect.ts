import { Backoff, type Logger, sleep } from "@x/core";
import { redactUrl, UNAVAILABLE_GRACE_MS, urlAt, urlList } from "@x/core/internal";
import type { ChannelModel } from "amqplib";
import { classifyConnectFailure } from "./connect-failure.js";
import { ErrorCode, RmqStorageError } from "./errors.js";

/** amqplib, loaded on the first connection: importing it at startup would cost the package's import time (#31). */
let amqplib: Promise<typeof import("amqplib")> | undefined;

/** The reconnect backoff of the client and the server: 100 ms, ×2, at most 5 s, ±20 %. */
export const reconnectBackoff = () => new Backoff({ initialMs: 100, factor: 2, maxMs: 5_000, jitter: 0.2 });

/** How to reach the broker. */
export interface ConnectOptions {
  /** The broker's address, or the addresses of the nodes of a cluster, tried in turn. */
  url: string | readonly string[];
  /** Which of several addresses to try first (taken modulo their number). Default 0. */
  first?: number | undefined;
  /** Heartbeat interval, in ms; 0 disables heartbeats, others are rounded up to whole seconds. */
  heartbeatMs: number;
  /** Give up after this long, in ms. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The connection's name on the broker (`connection_name`: the management UI, `rabbitmqctl`, `stats`). */
  name?: string | undefined;
  /** Where each failed attempt is logged, with its reason. Default: silent. */
  logger?: Logger | undefined;
}

export { redactUrls, urlList } from "@x/core/internal";

/**
 * Connects to the broker, trying its addresses in turn from `first` (the next one at once after a failure,
 * the reconnect backoff after a round of failures) until `timeoutMs` has passed. Each failed attempt is
 * logged with its reason. A refusal by the broker (login, virtual host, TLS certificate) ends at once; when
 * nothing answers at any address it ends after `UNAVAILABLE_GRACE_MS` (3 s, the toolkit's one grace for a
 * dependency that does not answer, PostgreSQL's too).
 *
 * @throws `ERR_X_RMQ_STORAGE_ACCESS_REFUSED`, `ERR_X_RMQ_STORAGE_UNREACHABLE`, or `ERR_X_RMQ_STORAGE_CONNECT`
 *   when no connection could be made in time (or the signal aborted); each message ends with the reason
 */
export async function connectBroker(options: ConnectOptions): Promise<ChannelModel> {
  const deadline = Date.now() + options.timeoutMs;
  amqplib ??= import("amqplib");
  const { connect } = await amqplib;
  const backoff = reconnectBackoff();
  const urls = urlList(options.url);
  /** When every address started to answer "nothing here", without a break. */
  let unavailableSince: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const given = urlAt(urls, (options.first ?? 0) + attempt);
    const shown = redactUrl(given);
    try {
      options.signal?.throwIfAborted();
      return await connect(withHeartbeat(given, options.heartbeatMs), {
        timeout: Math.max(100, deadline - Date.now()),
        noDelay: true,
        ...(options.name === undefined ? {} : { clientProperties: { connection_name: options.name } }),
      });
    } catch (cause) {
      if (options.signal?.aborted)
        throw new RmqStorageError(ErrorCode.CONNECT, `connecting to RabbitMQ at ${shown} was aborted`, {
          cause,
        });
      const failure = classifyConnectFailure(cause, given);
      if (failure.kind === "config")
        throw new RmqStorageError(
          ErrorCode.ACCESS_REFUSED,
          `cannot connect to RabbitMQ at ${shown}: ${failure.reason}`,
          { cause },
        );
      unavailableSince = failure.kind === "unavailable" ? (unavailableSince ?? Date.now()) : undefined;
      // Nothing answers: tried until the grace is over (the last attempt at its end), as every dependency is.
      const graceLeft =
        unavailableSince === undefined
          ? Number.POSITIVE_INFINITY
          : unavailableSince + UNAVAILABLE_GRACE_MS - Date.now();
      // The next address at once; after the last one, the backoff.
      const delayMs = Math.min(
        (attempt + 1) % urls.length === 0 ? backoff.next() : 0,
        Math.max(0, graceLeft),
      );
      const next = Date.now() + delayMs;
      if (unavailableSince !== undefined && (next >= deadline || graceLeft <= 0))
        throw new RmqStorageError(
          ErrorCode.UNREACHABLE,
          `cannot connect to RabbitMQ at ${shown}: ${failure.reason}`,
          { cause },
        );
      if (next >= deadline)
        throw new RmqStorageError(
          ErrorCode.CONNECT,
          `cannot connect to RabbitMQ at ${shown} within ${options.timeoutMs} ms: ${failure.reason}`,
          { cause },
        );
      options.logger?.warn(
        { url: shown, attempt: attempt + 1, reason: failure.reason, retryInMs: Math.round(delayMs) },
        "cannot connect to RabbitMQ yet; retrying",
      );
      if (delayMs > 0) await sleep(delayMs, { signal: options.signal }).catch(() => {});
    }
  }
}

/** `url` with a `heartbeat` query parameter (whole seconds, as AMQP negotiates them) unless it has one. */
function withHeartbeat(url: string, heartbeatMs: number): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has("heartbeat"))
    parsed.searchParams.set("heartbeat", String(Math.ceil(heartbeatMs / 1_000)));
  return parsed.toString();
}
