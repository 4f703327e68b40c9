import type { Logger } from "@x/core";
import { loggerOption, MAX_DURATION_MS, optionError, parseOptions, v } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "./errors.js";
import { redactUrl } from "./redact.js";

/** The `fetch` the binding calls, once per HTTP attempt. */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** Secrets sent with every request. They never appear in logs, events or errors. */
export interface Credentials {
  /** Sent verbatim as the `Cookie` header, e.g. `"webauthn=abc"`. Default none. */
  cookie?: string;
  /** Sent as `Authorization: Bearer <token>`. Default none. */
  bearerToken?: string;
}

/** Options of {@link ErmrestCatalog}. */
export interface ErmrestCatalogOptions {
  /** URL scheme. Default `"https"`. */
  scheme?: "http" | "https";
  /** Host or `host:port` of the ERMrest server, without a path. Required. */
  server: string;
  /** The catalog id, e.g. `1` or `"1"`: a non-empty string or a non-negative integer. Required. */
  catalogId: string | number;
  /** Cookie and/or bearer token. Default none. */
  credentials?: Credentials;
  /** Keep the last 2xx GET response per URL (1 000 URLs, LRU) and revalidate it with `If-None-Match`. Default `true`. */
  caching?: boolean;
  /**
   * The largest response body read, in bytes (an integer ≥ 0): a larger one is cancelled as soon as it
   * passes the bound and the call rejects with `ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE`. Default
   * `67_108_864` (64 MiB).
   */
  maxResponseBytes?: number;
  /**
   * The most bytes of response bodies the GET cache keeps in all, besides its 1 000 URLs (an integer ≥ 0); a
   * body larger than this is not cached. Default `67_108_864` (64 MiB).
   */
  maxCacheBytes?: number;
  /**
   * The longest wait for the next piece of a response body, in milliseconds (finite, > 0). A body that brings
   * nothing for this long is given up and its connection closed: a stalled connection rejects with a
   * `TimeoutError` (a network error: retried, an outage for `blockingPoll`), and a body that fetch never ends
   * although the server sent it whole (Node 22's fetch with a body its `Content-Encoding` refutes) rejects with
   * `ERR_X_POLLING_CATALOG_BAD_RESPONSE`. Default `30_000`.
   */
  bodyIdleTimeoutMs?: number;
  /**
   * How long a request that ERMrest rolled back (`503 Transaction aborted.`: nothing was written) keeps being
   * sent again, in milliseconds (0 to 2 147 483 647): after full-jitter waits below 100 ms, 200 ms … up to
   * 3.2 s. Concurrent writes to one table conflict on ERMrest whatever rows they touch, so under contention
   * a write may need many tries. Every method is retried, POST included, because a rolled-back request changed
   * nothing. `0` sends each request once. Default `300_000` (5 minutes).
   */
  maxTransactionRetryMs?: number;
  /**
   * How this client spaces its writes to a table, on which ERMrest rolls back (`503 Transaction aborted.`) every
   * write that overlaps another write's commit, whatever rows they touch. Reads are never paced.
   * - `"turns"` (default): while a `blockingPoll` of this catalog is bound to the change-notice broker, the
   *   writes of every client doing the same take turns per table, one at a time in the order they asked,
   *   handed round by a queue on that broker (see the README's *Write pacing*); otherwise as `false`.
   * - `false`: every write goes at once.
   * - `true`: after a rollback, this client's next writes to that table wait a jittered gap that grows
   *   fourfold at each further rollback and shrinks by 15 % at each commit, down to none.
   * - `"commit-rate"`: every write waits a random draw set by the catalog's commit rate read from the change
   *   notices, from a slow start, so that clients together keep about one write in ten rolled back; slow.
   */
  writePacing?: boolean | "commit-rate" | "turns";
  /** A pino-shaped logger. Default silent. */
  logger?: Logger;
  /** The `fetch` to call, once per attempt. Default the global `fetch`. */
  fetch?: FetchFunction;
}

/** The default of `maxResponseBytes` and `maxCacheBytes`: 64 MiB. */
const defaultMaxBytes = 64 * 1024 * 1024;
const bytes = v
  .number({ error: "an integer number of bytes ≥ 0" })
  .int({ error: "an integer number of bytes ≥ 0" })
  .min(0, { error: "an integer number of bytes ≥ 0" })
  .max(Number.MAX_SAFE_INTEGER, { error: "an integer number of bytes ≥ 0" });

const positiveMsError = `a number of milliseconds > 0 and ≤ ${MAX_DURATION_MS}`;
const positiveMs = v
  .number({ error: positiveMsError })
  .refine((value) => value > 0 && value <= MAX_DURATION_MS, { error: positiveMsError });
const durationMsError = `a number of milliseconds from 0 to ${MAX_DURATION_MS}`;
const durationMs = v
  .number({ error: durationMsError })
  .min(0, { error: durationMsError })
  .max(MAX_DURATION_MS, { error: durationMsError });

const isFunction = (value: unknown): boolean => typeof value === "function";

const credentialsSchema = v
  .object({ cookie: v.string().optional(), bearerToken: v.string().optional() })
  .strict();

/** {@link ErmrestCatalogOptions} after validation, defaults applied. */
export type ParsedCatalogOptions = Required<Omit<ErmrestCatalogOptions, "credentials" | "fetch">> & {
  credentials: Credentials;
  fetch?: FetchFunction | undefined;
};

/** The schema of {@link ErmrestCatalogOptions}. */
const catalogOptionsSchema: v.Schema<ParsedCatalogOptions> = v
  .object({
    scheme: v.enum(["http", "https"], { error: '"http" or "https"' }).default("https"),
    server: v
      .string({ error: "a host or host:port string" })
      .regex(/^[^/@]+$/, { error: "a non-empty host or host:port without / or @" }),
    catalogId: v.union([v.string().min(1), v.number().int().nonnegative()], {
      error: "a non-empty string or a non-negative integer",
    }),
    credentials: credentialsSchema.default({}),
    caching: v.boolean({ error: "a boolean" }).default(true),
    maxResponseBytes: bytes.default(defaultMaxBytes),
    maxCacheBytes: bytes.default(defaultMaxBytes),
    bodyIdleTimeoutMs: positiveMs.default(30_000),
    maxTransactionRetryMs: durationMs.default(300_000),
    writePacing: v
      .union([v.boolean(), v.literal("commit-rate"), v.literal("turns")], {
        error: 'a boolean, "commit-rate" or "turns"',
      })
      .default("turns"),
    logger: loggerOption,
    fetch: v.custom<FetchFunction>(isFunction, { error: "a function" }).optional(),
  })
  .strict();

/**
 * Validates catalog options; throws a {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_INVALID_OPTION` naming
 * the option and its value.
 */
export function parseCatalogOptions(input: unknown): ParsedCatalogOptions {
  const server = (input as { server?: unknown } | undefined)?.server;
  if (typeof server === "string" && server.includes("@")) {
    // `user:password@host` would put a password in every URL, log line and error: never echo it.
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "server",
      redactUrl(server),
      "a host or host:port without user information; pass secrets as credentials",
      PollingCatalogError,
    );
  }
  const credentials = (input as { credentials?: unknown } | undefined)?.credentials;
  if (credentials !== undefined && !credentialsSchema.safeParse(credentials).success) {
    // Never echo a credential, even a malformed one.
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "credentials",
      "[redacted]",
      "an object with string cookie and/or bearerToken",
      PollingCatalogError,
    );
  }
  return parseOptions(catalogOptionsSchema, input, ErrorCode.INVALID_OPTION, PollingCatalogError);
}
