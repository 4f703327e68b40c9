import { backoffDelay } from "@x/core";
import type { CatalogResponse } from "./response.js";

/**
 * Tries in all for GET, PUT and DELETE on a network error or a status of {@link isRetryableStatus} (other than a
 * rolled-back transaction).
 */
export const maxTries = 5;
/**
 * The ceiling of the full-jitter waits between the tries of a request ERMrest rolled back (`503 Transaction
 * aborted.`), in ms: they start below 100 ms and double up to this.
 */
export const maxRolledBackDelayMs = 3_200;
/** The longest wait a `Retry-After` header can impose, in ms. */
const maxRetryAfterMs = 60_000;
/**
 * What a server answers under load, or while it or its proxy restarts: 429, 500 (ERMrest's answer when its
 * database connection pool is exhausted), 502, 503, 504.
 */
const retryStatuses = new Set([429, 500, 502, 503, 504]);
/** The text ERMrest answers (with 503) when PostgreSQL rolled a SERIALIZABLE transaction back. */
const transactionAbortedText = "Transaction aborted.";

/** Whether a response with this status (429, 500, 502, 503, 504) is worth another try of an idempotent request. */
export function isRetryableStatus(status: number): boolean {
  return retryStatuses.has(status);
}

/**
 * Whether the response is ERMrest's answer to a serialization failure: `503` with the text `Transaction
 * aborted.`. The server rolled the whole request back, so it is safe to send again whatever the method.
 */
export function isTransactionAborted(response: CatalogResponse): boolean {
  return response.status === 503 && response.text().includes(transactionAbortedText);
}

/**
 * The wait before retry number `retry` (0 for the first): a full-jitter draw below 100, 200, 400, 800 ms, or
 * the response's `Retry-After` (seconds or an HTTP date) capped at 60 s.
 *
 * @param retry - retries already made, from 0
 * @param retryAfter - the `Retry-After` header, if any
 * @param now - the current time in ms since the epoch
 * @param random - source of randomness in [0, 1). Default `Math.random`.
 */
export function retryDelayMs(
  retry: number,
  retryAfter: string | null,
  now = Date.now(),
  random: () => number = Math.random,
): number {
  return (
    retryAfterMs(retryAfter, now) ??
    backoffDelay(retry, { initialMs: 100, factor: 2, maxMs: 800, jitter: "full", random })
  );
}

/**
 * The wait a `Retry-After` header asks for (seconds or an HTTP date), capped at 60 s; `undefined` when there is
 * none or it does not parse.
 *
 * @param value - the header, if any
 * @param now - the current time in ms since the epoch
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  let waitMs: number | undefined;
  if (/^\d+$/.test(text)) waitMs = Number(text) * 1000;
  else {
    const date = Date.parse(text);
    waitMs = Number.isNaN(date) ? undefined : Math.max(0, date - now);
  }
  return waitMs === undefined ? undefined : Math.min(maxRetryAfterMs, waitMs);
}
