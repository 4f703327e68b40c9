import { backoffDelay } from "@x/core";
import type { CatalogResponse } from "./response.js";

/** Tries in all for GET, PUT and DELETE, and for a POST answered `503 Transaction aborted.`. */
export const maxTries = 5;
/** The longest wait a `Retry-After` header can impose, in ms. */
const maxRetryAfterMs = 60_000;
const retryStatuses = new Set([502, 503, 504]);
/** The text ERMrest answers (with 503) when PostgreSQL rolled a SERIALIZABLE transaction back. */
const transactionAbortedText = "Transaction aborted.";

/** Whether a response with this status is worth another try of an idempotent request. */
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
  const fromHeader = parseRetryAfter(retryAfter, now);
  if (fromHeader !== undefined) return Math.min(maxRetryAfterMs, fromHeader);
  return backoffDelay(retry, { initialMs: 100, factor: 2, maxMs: 800, jitter: "full", random });
}

function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
