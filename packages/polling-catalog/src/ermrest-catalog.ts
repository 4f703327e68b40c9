import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { basename } from "node:path";
import { type InspectOptions, inspect } from "node:util";
import { Backoff, type Logger, sleep, XError } from "@x/core";
import { brokenHttpError } from "./broken-http.js";
import {
  type ErmrestCatalogOptions,
  type FetchFunction,
  type ParsedCatalogOptions,
  parseCatalogOptions,
} from "./catalog-options.js";
import { ErrorCode, errorForStatus, NotModified, PollingCatalogError } from "./errors.js";
import { Lru } from "./lru.js";
import { networkError } from "./network-error.js";
import { waitSignal } from "./poll-signal.js";
import { type BoundedBody, readBoundedBody } from "./read-body.js";
import { inspectAs, maskSecrets, redactedMark, secretsOf } from "./redact.js";
import { CatalogResponse } from "./response.js";
import {
  isRetryableStatus,
  isTransactionAborted,
  maxRolledBackDelayMs,
  maxTries,
  retryAfterMs,
  retryDelayMs,
} from "./retry.js";
import { CommitRatePacing, WritePacing, writeTable } from "./write-pacing.js";
import { type EndTurn, turnQueueName, type WriteTurns } from "./write-turns.js";

/** The turn queue whose turn the current async context holds (see {@link ErmrestCatalog.withWriteTurn}). */
const heldTurn = new AsyncLocalStorage<string>();

/** Request headers: a record, a `Headers`, or name-value pairs. */
export type HeadersInput = Record<string, string> | Headers | Array<[string, string]>;

/** Options of {@link ErmrestCatalog.get}. */
export interface GetOptions {
  /** Reject with {@link NotModified} on a 304 instead of resolving with the cached entry. Default `false`. */
  raiseNotModified?: boolean;
  /** Extra request headers, merged last and case-insensitively: they replace the binding's own. Default none. */
  headers?: HeadersInput;
  /** Aborting it abandons the request and its retries; the call rejects with `signal.reason`. Default none. */
  signal?: AbortSignal;
}

/** Options of {@link ErmrestCatalog.put}. */
export interface PutOptions {
  /** The body, any JSON value (`[]` included), sent as `application/json`. Required. */
  json: unknown;
  /**
   * A response whose non-null `etag` is sent as `If-Match`, so the write fails with 412 if the catalog changed
   * since. Default none: the write is not guarded.
   */
  guardResponse?: CatalogResponse;
  /**
   * Extra request headers, merged last and case-insensitively. A caller's `If-Match` wins over the guard.
   * Default none.
   */
  headers?: HeadersInput;
  /** Aborting it abandons the request and its retries. Default none. */
  signal?: AbortSignal;
}

/** Options of {@link ErmrestCatalog.post}. */
export type PostOptions = Omit<PutOptions, "guardResponse">;

/** Options of {@link ErmrestCatalog.delete}. */
export type DeleteOptions = Omit<PutOptions, "json">;

interface RequestSpec {
  method: "GET" | "PUT" | "POST" | "DELETE";
  path: string;
  headers?: HeadersInput | undefined;
  json?: unknown;
  hasBody: boolean;
  guard?: CatalogResponse | undefined;
  signal?: AbortSignal | undefined;
}

/** What {@link ErmrestCatalog.toJSON} and `util.inspect` show of a catalog: no secret. */
export interface CatalogDescription {
  /** The catalog's base URL. */
  url: string;
  /** Whether GET responses are cached. */
  caching: boolean;
  /** The `maxResponseBytes` option. */
  maxResponseBytes: number;
  /** The `maxCacheBytes` option. */
  maxCacheBytes: number;
  /** The `bodyIdleTimeoutMs` option. */
  bodyIdleTimeoutMs: number;
  /** Which credentials are set, each as `"***"`. */
  credentials: { cookie?: string; bearerToken?: string };
}

/** The timeout of one HTTP attempt, in ms. */
const attemptTimeoutMs = 63_000;
/** How many GET responses the cache keeps. */
const cacheCapacity = 1_000;

/** A response and the size of its body in bytes, as received. */
interface Sent {
  response: CatalogResponse;
  bytes: number;
}

/**
 * An HTTP binding of one ERMrest catalog: GET with a revalidated response cache, ETag-guarded PUT and DELETE,
 * POST, retries with full jitter (of idempotent requests, and of any request ERMrest rolled back), and typed errors ({@link HTTPError}, {@link NotModified},
 * {@link ConcurrentUpdate}).
 *
 * Paths are appended verbatim to `<scheme>://<server>/ermrest/catalog/<id>`: encode names and values yourself.
 *
 * @example
 * ```ts
 * const catalog = new ErmrestCatalog({ server: "example.org", catalogId: 1 });
 * const rows = (await catalog.get("/entity/S:Job/state=new")).json();
 * ```
 */
export class ErmrestCatalog<
  // biome-ignore lint/suspicious/noExplicitAny: the constraint of Node's typed EventEmitter.
  Events extends Record<keyof Events, any[]> = Record<never, never>,
> extends EventEmitter<Events> {
  /** The catalog's base URL, `<scheme>://<server>/ermrest/catalog/<id>`. */
  readonly url: string;
  /** The logger given in the options (default silent). */
  protected readonly logger: Logger;
  /** The validated options, without the credentials (kept private, so that nothing can print them). */
  protected readonly options: Omit<ParsedCatalogOptions, "credentials">;
  /** Which credentials were given, for {@link ErmrestCatalog.toJSON}: never their values. */
  readonly #credentialNames: Array<keyof ParsedCatalogOptions["credentials"]>;
  /** The credentials and their parts, masked in error bodies: a server may echo the request's headers. */
  readonly #secrets: string[];
  readonly #fetch: FetchFunction;
  readonly #cache: Lru<string, Sent> | undefined;
  readonly #baseHeaders: Headers;
  /** The pacing of `writePacing: true` or `"commit-rate"`. */
  readonly #pacing: WritePacing | CommitRatePacing | undefined;
  readonly #commitRate: CommitRatePacing | undefined;
  /**
   * Where writes take turns with `writePacing: "turns"`: the live change-notice subscription's, set by a
   * `blockingPoll` while it is bound; without one, writes go at once.
   */
  protected writeTurns: WriteTurns | undefined;

  #noticesSeen = 0;
  #ownCommits = 0;
  /**
   * Commits of other clients seen through the change notices: the notices beyond this client's own commits,
   * never decreasing (a notice of this client's write may come before or after its answer).
   */
  protected othersCommits = 0;

  /** Tells the write pacing that the catalog committed a write (a change notice arrived). */
  protected observeCommit(): void {
    this.#noticesSeen++;
    this.othersCommits = Math.max(this.othersCommits, this.#noticesSeen - this.#ownCommits);
    this.#commitRate?.observeCommit();
  }

  /**
   * @param options - see {@link ErmrestCatalogOptions}; validated at once, a bad one throws
   *   `ERR_X_POLLING_CATALOG_INVALID_OPTION`
   */
  constructor(options: ErmrestCatalogOptions) {
    super();
    const { credentials, ...parsed } = parseCatalogOptions(options);
    this.options = parsed;
    this.#commitRate = parsed.writePacing === "commit-rate" ? new CommitRatePacing() : undefined;
    this.#pacing = this.#commitRate ?? (parsed.writePacing === true ? new WritePacing() : undefined);
    this.#secrets = secretsOf(credentials);
    this.#credentialNames = (["cookie", "bearerToken"] as const).filter(
      (name) => credentials[name] !== undefined,
    );
    const { scheme, server, catalogId, caching, logger } = parsed;
    this.url = `${scheme}://${server}/ermrest/catalog/${encodeURIComponent(String(catalogId))}`;
    this.logger = logger;
    this.#fetch = this.options.fetch ?? ((input, init) => fetch(input, init));
    this.#cache = caching
      ? new Lru<string, Sent>({
          maxEntries: cacheCapacity,
          maxWeight: parsed.maxCacheBytes,
          weigh: (e) => e.bytes,
        })
      : undefined;
    this.#baseHeaders = new Headers({ Accept: "*/*", "Deriva-Client-Context": clientContext() });
    if (credentials.cookie !== undefined) this.#baseHeaders.set("Cookie", credentials.cookie);
    if (credentials.bearerToken !== undefined)
      this.#baseHeaders.set("Authorization", `Bearer ${credentials.bearerToken}`);
  }

  /**
   * What `JSON.stringify` and structured loggers print: the URL, the settings, and which credentials are set,
   * each shown as `"***"`. Never a credential.
   */
  toJSON(): CatalogDescription {
    const credentials: CatalogDescription["credentials"] = {};
    for (const name of this.#credentialNames) credentials[name] = redactedMark;
    const { caching, maxResponseBytes, maxCacheBytes, bodyIdleTimeoutMs } = this.options;
    return { url: this.url, caching, maxResponseBytes, maxCacheBytes, bodyIdleTimeoutMs, credentials };
  }

  /** `<ClassName> <url>`, for template literals and `String()`. */
  override toString(): string {
    return `${this.constructor.name} ${this.url}`;
  }

  /** What `util.inspect` (and so `console.log`) prints: the class name and {@link ErmrestCatalog.toJSON}. */
  [inspect.custom](depth: number, options: InspectOptions, nested: typeof inspect): string {
    return inspectAs(this.constructor.name, this.toJSON(), depth, options, nested);
  }

  /**
   * GET `path`. With caching on, a cached entry's ETag is sent as `If-None-Match` (unless the caller sends
   * `If-None-Match` or `If-Match`), and a 304 resolves with the cached entry.
   *
   * @param path - starts with `/`, appended verbatim to the catalog URL
   * @param options - see {@link GetOptions}
   * @throws {@link NotModified} on 304 with `raiseNotModified`; {@link HTTPError} on 400–599
   */
  async get(path: string, options: GetOptions = {}): Promise<CatalogResponse> {
    const url = this.#url(path);
    const cached = this.#cache?.get(url)?.response;
    const headers = new Headers();
    if (cached?.etag != null) headers.set("If-None-Match", cached.etag);
    const callerHeaders = new Headers(options.headers);
    if (callerHeaders.has("if-none-match") || callerHeaders.has("if-match")) headers.delete("If-None-Match");
    const sent = await this.#send(url, {
      method: "GET",
      path,
      headers: mergeHeaders(headers, callerHeaders),
      hasBody: false,
      signal: options.signal,
    });
    const { response } = sent;
    if (response.status === 304) {
      if (options.raiseNotModified) throw new NotModified(response, cached);
      return cached ?? response;
    }
    if (response.status >= 200 && response.status < 300) this.#cache?.set(url, sent);
    return response;
  }

  /**
   * PUT a JSON body to `path`, guarded by `guardResponse`'s ETag when given.
   *
   * @param path - starts with `/`
   * @param options - see {@link PutOptions}
   * @throws {@link ConcurrentUpdate} on 412; {@link HTTPError} on other statuses from 400 to 599
   */
  put(path: string, options: PutOptions): Promise<CatalogResponse> {
    return this.#write({ method: "PUT", path, ...options, hasBody: true, guard: options?.guardResponse });
  }

  /**
   * POST a JSON body to `path`. Never guarded; retried only when ERMrest answers `503 Transaction aborted.`
   * (it rolled the request back, so nothing was inserted).
   *
   * @param path - starts with `/`
   * @param options - see {@link PostOptions}
   * @throws {@link HTTPError} on 400–599
   */
  post(path: string, options: PostOptions): Promise<CatalogResponse> {
    return this.#write({ method: "POST", path, ...options, hasBody: true });
  }

  /**
   * DELETE `path`, guarded by `guardResponse`'s ETag when given.
   *
   * @param path - starts with `/`
   * @param options - see {@link DeleteOptions}
   * @throws {@link ConcurrentUpdate} on 412; {@link HTTPError} on other statuses from 400 to 599
   */
  delete(path: string, options: DeleteOptions = {}): Promise<CatalogResponse> {
    return this.#write({ method: "DELETE", path, ...options, hasBody: false, guard: options.guardResponse });
  }

  async #write(spec: RequestSpec): Promise<CatalogResponse> {
    const url = this.#url(spec.path);
    if (spec.hasBody && spec.json === undefined) {
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option json: undefined (expected a JSON value to send as the ${spec.method} body)`,
      );
    }
    const headers = new Headers();
    if (spec.guard?.etag != null) headers.set("If-Match", spec.guard.etag);
    const sent = await this.#send(url, {
      ...spec,
      headers: mergeHeaders(headers, new Headers(spec.headers)),
    });
    return sent.response;
  }

  #url(path: string): string {
    if (typeof path !== "string" || !path.startsWith("/")) {
      throw new PollingCatalogError(
        ErrorCode.BAD_PATH,
        `invalid path ${JSON.stringify(String(path))}: expected a non-empty string starting with "/"`,
      );
    }
    return this.url + path;
  }

  /** One request with its retries; resolves with a 1xx–3xx response, rejects on 400–599. */
  async #send(url: string, spec: RequestSpec): Promise<Sent> {
    const headers = new Headers(this.#baseHeaders);
    const init: RequestInit = { method: spec.method, headers };
    if (spec.hasBody) {
      init.body = JSON.stringify(spec.json);
      headers.set("Content-Type", "application/json");
    }
    mergeHeaders(headers, new Headers(spec.headers));
    // POST is not idempotent: only a rolled-back transaction (nothing written) is sent again.
    const idempotent = spec.method !== "POST";
    // A rolled-back transaction is sent again until maxTransactionRetryMs; other failures get maxTries tries.
    const rolledBack = new Backoff({
      initialMs: 100,
      factor: 2,
      maxMs: maxRolledBackDelayMs,
      jitter: "full",
    });
    const rolledBackUntil = performance.now() + this.options.maxTransactionRetryMs;
    // Writes to one table are paced (see writePacing); reads never are.
    const table =
      spec.method !== "GET" && this.options.writePacing !== false ? writeTable(spec.path) : undefined;
    // Waits end with the request's signal, and with the blockingPoll's while its lookForWork runs; so does a
    // GET (it changes nothing), while a write in flight is left to finish.
    const waitsSignal = waitSignal(spec.signal);
    const attemptSignal = spec.method === "GET" ? waitsSignal : spec.signal;
    let failures = 0;
    for (let attempt = 1; ; attempt++) {
      let sent: Sent;
      let startedMs = 0;
      try {
        const endTurn = table === undefined ? undefined : await this.#ready(table, waitsSignal);
        try {
          startedMs = performance.now();
          sent = await this.#attempt(url, init, attemptSignal);
        } finally {
          endTurn?.();
        }
      } catch (error) {
        // Our own errors (a body over maxResponseBytes) are answers, not network failures: not retried.
        if (attemptSignal?.aborted || XError.is(error)) throw error;
        if (++failures >= maxTries || !idempotent) throw networkError(error, `${spec.method} ${url}`);
        const waitMs = retryDelayMs(failures - 1, null);
        this.logger.debug(
          { method: spec.method, url, attempt, waitMs: Math.round(waitMs), error: describeError(error) },
          "Retrying after a network error.",
        );
        await sleep(waitMs, { signal: waitsSignal });
        continue;
      }
      const { response } = sent;
      const retryAfter = response.headers.get("retry-after");
      const aborted = isTransactionAborted(response);
      if (spec.method !== "GET" && response.status < 300) this.#ownCommits++;
      if (table !== undefined) this.#pacing?.settle(table, aborted, performance.now() - startedMs);
      if (aborted) {
        const leftMs = rolledBackUntil - performance.now();
        if (leftMs > 0) {
          const waitMs = Math.min(leftMs, retryAfterMs(retryAfter) ?? rolledBack.next());
          this.logger.debug(
            { method: spec.method, url, attempt, waitMs: Math.round(waitMs) },
            "Retrying after a rolled-back transaction.",
          );
          await sleep(waitMs, { signal: waitsSignal });
          continue;
        }
      } else if (idempotent && isRetryableStatus(response.status) && ++failures < maxTries) {
        const waitMs = retryDelayMs(failures - 1, retryAfter);
        this.logger.debug(
          { method: spec.method, url, attempt, status: response.status, waitMs: Math.round(waitMs) },
          "Retrying after a server error.",
        );
        await sleep(waitMs, { signal: waitsSignal });
        continue;
      }
      if (response.status >= 400 && response.status <= 599) throw errorForStatus(this.#masked(response));
      return sent;
    }
  }

  /** The response with our credentials masked in its body, if it echoes any: what an error may hold. */
  #masked(response: CatalogResponse): CatalogResponse {
    const body = response.text();
    const masked = maskSecrets(body, this.#secrets);
    return masked === body
      ? response
      : new CatalogResponse(response.status, response.headers, response.url, masked, response.method);
  }

  /**
   * Runs `fn` holding this client's write turn for the table of `path` (`writePacing: "turns"` while a
   * `blockingPoll` is bound to the notice broker), so that what `fn` reads is still current when it writes: its
   * writes to that table take no further turn. Without turns, runs `fn` at once.
   *
   * @param path - a write path of the table, e.g. `/attributegroup/S:Job/RID;state`
   * @param signal - aborting it gives up the wait for the turn
   * @param fn - called with whether it holds a turn
   */
  protected async withWriteTurn<T>(
    path: string,
    signal: AbortSignal | undefined,
    fn: (held: boolean) => Promise<T>,
  ): Promise<T> {
    const turns = this.options.writePacing === "turns" ? this.writeTurns : undefined;
    if (turns === undefined) return fn(false);
    const queue = turnQueueName(this.url, writeTable(path));
    const endTurn = await turns.take(queue, waitSignal(signal));
    if (endTurn === undefined) return fn(false);
    try {
      return await heldTurn.run(queue, () => fn(true));
    } finally {
      endTurn();
    }
  }

  /** Waits until a write to `table` may start; resolves with the end of its turn when it took one. */
  async #ready(table: string, signal: AbortSignal | undefined): Promise<EndTurn | undefined> {
    if (this.#pacing !== undefined) {
      await this.#pacing.ready(table, signal);
      return undefined;
    }
    const queue = turnQueueName(this.url, table);
    // a write inside withWriteTurn already holds the table's turn
    if (heldTurn.getStore() === queue) return undefined;
    return this.writeTurns?.take(queue, signal);
  }

  async #attempt(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Sent> {
    const stop = new AbortController(); // drops the connection of a body over maxResponseBytes
    const signals = [stop.signal, AbortSignal.timeout(attemptTimeoutMs)];
    const attemptSignal = AbortSignal.any(signal ? [signal, ...signals] : signals);
    const what = `${init.method} ${url}`;
    let response: Response;
    let body: BoundedBody;
    try {
      response = await this.#fetch(url, { ...init, signal: attemptSignal });
      const limits = {
        maxBytes: this.options.maxResponseBytes,
        idleTimeoutMs: this.options.bodyIdleTimeoutMs,
      };
      body = await readBoundedBody(response, limits, what, () => stop.abort());
    } catch (error) {
      throw brokenHttpError(error, what);
    }
    return {
      response: new CatalogResponse(response.status, response.headers, url, body.text, init.method),
      bytes: body.bytes,
    };
  }
}

function mergeHeaders(target: Headers, extra: Headers): Headers {
  for (const [name, value] of extra) target.set(name, value);
  return target;
}

function clientContext(): string {
  const cid = basename(process.argv[1] ?? process.argv0);
  const wid = randomBytes(12).toString("hex");
  return encodeURIComponent(JSON.stringify({ cid, wid }));
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
