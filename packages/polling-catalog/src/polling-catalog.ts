import { MAX_DURATION_MS, parseOptions, v } from "@x/core/internal";
import { amqpUrlsFor } from "./amqp-address.js";
import type { ErmrestCatalogOptions } from "./catalog-options.js";
import { appliedPairs, keyNames } from "./claim-keys.js";
import { type CatalogDescription, ErmrestCatalog } from "./ermrest-catalog.js";
import { ConcurrentUpdate, ErrorCode, NotModified, PollingCatalogError } from "./errors.js";
import type { ClaimedEvent, PollingCatalogEvents } from "./events.js";
import { fakeNoticeSource } from "./fake-notices.js";
import { NoticeSubscription } from "./notice-subscription.js";
import { PollLoop } from "./poll-loop.js";
import { withPollSignal } from "./poll-signal.js";
import { redactUrl } from "./redact.js";
import type { CatalogResponse } from "./response.js";

/** Options of {@link PollingErmrestCatalog}: those of {@link ErmrestCatalog} plus the AMQP ones. */
export interface PollingErmrestCatalogOptions extends ErmrestCatalogOptions {
  /**
   * Where ERMrest publishes change notices: a host, `host:port` (guest/guest, vhost `/`) or an `amqp://` /
   * `amqps://` URL; or the nodes of a RabbitMQ cluster, as a list of such addresses or in one string
   * separated by spaces. A bind tries them in turn from the first (the next at once after a failure); a lost
   * connection binds again starting at the next node. The connection's heartbeat is 60 s unless the URL sets
   * one with its `heartbeat` query parameter, which the AMQP URI format gives in seconds. `null`: no change
   * notices, `blockingPoll` polls every `pollingMs` and touches no broker.
   *
   * Default: for a `server` where a fake ERMrest of this process serves (`startFakeErmrest`), the broker that
   * fake publishes on, or `null` when it publishes no notices; else the catalog server's host, port 5672,
   * guest/guest, as in deriva-py. A bind declares `noticeExchange` there (fanout, not durable, not
   * auto-deleted: it outlives the agent, as ERMrest's own does) and an exclusive queue deleted with the
   * connection.
   */
  amqpServer?: string | string[] | null;
  /**
   * The fanout exchange ERMrest publishes `change` notices on. Default `"ermrest_changes"`, or the exchange of
   * the fake ERMrest serving at `server`.
   */
  noticeExchange?: string;
}

/** Options of {@link PollingErmrestCatalog.blockingPoll}. */
export interface BlockingPollOptions {
  /**
   * Run `lookForWork` at least this often after the end of the previous drain, in milliseconds (finite,
   * > 0). Default `600_000` (10 minutes).
   */
  pollingMs?: number;
  /** Wait this long without a new notice before draining, in milliseconds (finite, ≥ 0). Default `100`. */
  coalesceMs?: number;
  /**
   * A stream of notices cannot postpone a drain longer than this after the wake began, in milliseconds
   * (finite, ≥ 0). Default `5_000`.
   */
  maxCoalesceMs?: number;
  /**
   * During a catalog outage (a drain failed with a refused, reset or timed-out connection, or 502, 503, 504),
   * the drain is retried after a full-jitter draw below 0.5 s, 1 s, 2 s … up to this ceiling, and never
   * later than `pollingMs`, in milliseconds (finite, > 0). A change notice retries at once. Default `30_000`.
   */
  maxRetryDelayMs?: number;
  /**
   * Reject with the drain's error once an outage has lasted this long, in milliseconds (≥ 0; `0` rejects on
   * the first outage error). Default `Infinity`: an outage never ends `blockingPoll`.
   */
  maxOutageMs?: number;
  /**
   * The longest wait between AMQP bind attempts, in milliseconds (finite, ≥ 1 000). The waits grow about
   * 5 s, 25 s, 125 s (each drawn ±50 %) up to this. Default `300_000` (5 minutes).
   */
  maxBindDelayMs?: number;
  /**
   * During a catalog outage, log one warning when it starts, one line when it ends, and a summary
   * (`The catalog is still unavailable.`, with its duration and failed drains) this often in between, in
   * milliseconds (> 0). Each retry logs at debug only. Default `60_000`.
   */
  outageSummaryMs?: number;
  /** Aborting it ends `blockingPoll`, which then resolves. Default none. */
  signal?: AbortSignal;
}

/** The row shape `stateChangeOnce` works with: a JSON object. */
export type Row = Record<string, unknown>;

/** What `stateChangeOnce`'s transform returns for one candidate: its update, or `null`/`undefined` to drop it. */
export type RowTransform = (row: Row) => Row | null | undefined | Promise<Row | null | undefined>;

/** Options of {@link PollingErmrestCatalog.stateChangeOnce}. */
export interface StateChangeOptions {
  /**
   * Spread competing agents over the candidates instead of racing for the first: pick up to `claimRows`
   * candidates at random (a draw of this call's own) and claim them with one unguarded PUT; the rows the server
   * applied are the `batch`. `updatePath` must make the PUT conditional by renaming a key column (ERMrest's
   * `expected:=state` form, e.g. `/attributegroup/S:Job/RID,expected:=state;state`), so that a row another
   * agent claimed first matches nothing and is skipped. When none of them was left, the candidates are read
   * again, once: a losing agent writes at most twice per call. Use with `?limit=N`, N about ten
   * times `claimRows` whatever the number of agents (more makes reads longer, not claims luckier). Default `false`: one PUT of every update, guarded by the GET's
   * ETag.
   */
  spread?: boolean;
  /**
   * With `spread`, the most candidates one claiming PUT takes (an integer ≥ 1). More rows per claim means
   * fewer writes per row, so fewer conflicts on a real ERMrest, at the price of one agent holding several rows
   * at once. Default `10`.
   */
  claimRows?: number;
  /**
   * Aborting it abandons the call: its GETs and their retries, and its claim's waits (pacing, retries); a claim
   * already sent is left to finish. Inside `blockingPoll`'s `lookForWork`, the poll's own signal does the same
   * without this option. Default none.
   */
  signal?: AbortSignal;
}

/** The result of {@link PollingErmrestCatalog.stateChangeOnce}. */
export interface StateChange {
  /** Thread this into the next call: non-null only when this call found no work. */
  idleEtag: string | null;
  /** The `[candidate, update]` pairs that were PUT, in row order; empty when nothing was claimed. */
  batch: Array<[candidate: Row, update: Row]>;
}

/**
 * How many candidates a `spread` claim takes by default. Measured with 20 unpaced agents, 1 000 rows, each batch
 * completed with one PUT, on the fake that conflicts like ERMrest: 10 rows per claim cost 0.68 requests per
 * completed row in 6.8 s, 5 rows 1.42 in 18.4 s, 20 rows 0.51 in 9.2 s (see the benchmarks).
 */
const defaultClaimRows = 10;
/** How many times a `spread` claim reads the candidates (and writes one claim) before giving up. */
const maxSpreadRounds = 2;

const amqpOptionsSchema = v
  .object({
    amqpServer: v
      .union([v.string().min(1), v.array(v.string().min(1)).min(1), v.literal(null)], {
        error:
          "a host, host:port or amqp(s):// URL, a non-empty list of them (the nodes of a cluster), or null for no notices",
      })
      .optional(),
    noticeExchange: v.string({ error: "a non-empty exchange name" }).min(1).optional(),
  })
  .strict();

/** A duration option: a number of milliseconds from `min` (or above it, with `exclusive`) to the longest timer. */
const milliseconds = (min: number, exclusive = false) => {
  const error = `a number of milliseconds ${exclusive ? ">" : "≥"} ${min} and ≤ ${MAX_DURATION_MS}`;
  return v
    .number({ error })
    .refine((value) => (exclusive ? value > min : value >= min) && value <= MAX_DURATION_MS, { error });
};
const pollOptionsSchema = v
  .object({
    pollingMs: milliseconds(0, true).default(600_000),
    coalesceMs: milliseconds(0).default(100),
    maxCoalesceMs: milliseconds(0).default(5_000),
    maxRetryDelayMs: milliseconds(0, true).default(30_000),
    maxOutageMs: v
      .number({ error: `a number of milliseconds from 0 to ${MAX_DURATION_MS}, or Infinity` })
      .refine((value) => value >= 0 && (value <= MAX_DURATION_MS || value === Number.POSITIVE_INFINITY), {
        error: `a number of milliseconds from 0 to ${MAX_DURATION_MS}, or Infinity`,
      })
      .default(Number.POSITIVE_INFINITY),
    maxBindDelayMs: milliseconds(1_000).default(300_000),
    outageSummaryMs: milliseconds(0, true).default(60_000),
    signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
  })
  .strict();

/**
 * A catalog binding for condition-action agents: {@link PollingErmrestCatalog.stateChangeOnce} claims
 * candidate rows with an ETag-guarded GET-then-PUT, and {@link PollingErmrestCatalog.blockingPoll} runs an
 * agent whenever there might be work, woken by ERMrest's AMQP change notices with polling as the safety net.
 *
 * Events (typed, never `error`): `wake`, `amqp`, `claimed`, `outage`, `recovered`; see
 * {@link PollingCatalogEvents}.
 */
export class PollingErmrestCatalog extends ErmrestCatalog<PollingCatalogEvents> {
  /**
   * The AMQP URL notices are read from, its password shown as `***` (`amqp://user:***@host?heartbeat=60`);
   * with several addresses, all of them separated by spaces; `""` without notices.
   */
  readonly amqpUrl: string;
  /** The AMQP URLs notices are read from, one per address given, each password shown as `***`; none without notices. */
  readonly amqpUrls: readonly string[];
  /** The notice exchange. */
  readonly noticeExchange: string;
  /** The AMQP URLs with their passwords: private, so that no `util.inspect` or log can print them. */
  readonly #amqpUrls: readonly string[];

  /**
   * @param options - see {@link PollingErmrestCatalogOptions}; validated at once, a bad one throws
   *   `ERR_X_POLLING_CATALOG_INVALID_OPTION`
   */
  constructor(options: PollingErmrestCatalogOptions) {
    const { amqpServer, noticeExchange, ...base } = (options ?? {}) as PollingErmrestCatalogOptions;
    super(base);
    const amqp = parseOptions(
      amqpOptionsSchema,
      { amqpServer, noticeExchange },
      ErrorCode.INVALID_OPTION,
      PollingCatalogError,
    );
    const fake = amqpServer === undefined ? fakeNoticeSource(this.options.server) : undefined;
    const server = fake ? (fake.amqpUrl ?? null) : amqp.amqpServer;
    this.#amqpUrls = server === null ? [] : amqpUrlsFor(server, this.options.server);
    this.amqpUrls = Object.freeze(this.#amqpUrls.map((url) => redactUrl(url)));
    this.amqpUrl = this.amqpUrls.join(" ");
    this.noticeExchange = amqp.noticeExchange ?? fake?.noticeExchange ?? "ermrest_changes";
  }

  /** {@link ErmrestCatalog.toJSON} plus the AMQP URL (password shown as `***`) and the notice exchange. */
  override toJSON(): CatalogDescription & { amqpUrl: string; noticeExchange: string } {
    return { ...super.toJSON(), amqpUrl: this.amqpUrl, noticeExchange: this.noticeExchange };
  }

  /**
   * One claim step: GET `queryPath` (revalidated), transform each row, PUT the updates to `updatePath`
   * guarded by the GET's ETag. Returns at once with no work when the catalog still has `idleEtag`.
   *
   * @param queryPath - finds candidate rows, e.g. `/entity/S:Job/state=new?limit=1`
   * @param updatePath - takes the updates, e.g. `/attributegroup/S:Job/RID;state`
   * @param transform - maps a candidate to its update, or to `null`/`undefined` to drop it; called one row at a time
   * @param idleEtag - the `idleEtag` of the previous call, or `null`/omitted
   * @param options - see {@link StateChangeOptions}
   * @throws {@link ConcurrentUpdate} when another writer changed the catalog between the GET and the PUT
   *   (nothing was written; never with `spread`); {@link HTTPError}; the transform's own error (before any PUT);
   *   `ERR_X_POLLING_CATALOG_INVALID_OPTION` for `spread` with an `updatePath` that renames no column
   */
  async stateChangeOnce(
    queryPath: string,
    updatePath: string,
    transform: RowTransform,
    idleEtag: string | null = null,
    options: StateChangeOptions = {},
  ): Promise<StateChange> {
    const spread = options?.spread ?? false;
    const signal = options?.signal;
    const claimRows = options?.claimRows ?? defaultClaimRows;
    if (!Number.isInteger(claimRows) || claimRows < 1)
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option claimRows: ${String(claimRows)} (expected an integer ≥ 1)`,
      );
    const keys =
      typeof updatePath === "string" && updatePath.includes(":=") ? keyNames(updatePath) : undefined;
    if (spread && keys === undefined) {
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option spread: true with updatePath ${JSON.stringify(updatePath)} (expected a conditional update path that renames a key column, e.g. /attributegroup/S:Job/RID,expected:=state;state)`,
      );
    }
    for (let round = 1; ; round++) {
      const othersBefore = this.othersCommits;
      const seen = await this.#plan(queryPath, transform, idleEtag, signal);
      if (!seen.plan) return { idleEtag: seen.etag, batch: [] };
      // There is work: once this client's write turn has come (see writePacing "turns"), read again if another
      // client committed meanwhile, so that the claim is made on rows nobody took while it waited.
      const claimed = await this.withWriteTurn(updatePath, signal, async (held) => {
        const changed = held && this.othersCommits !== othersBefore;
        const found = changed ? await this.#plan(queryPath, transform, null, signal) : seen;
        if (!found.plan) return { idleEtag: found.etag, batch: [] };
        const { plan, before } = found;
        return this.#claim(
          queryPath,
          updatePath,
          { plan, before },
          { spread, keys, claimRows, round, signal },
        );
      });
      if (claimed !== undefined) return claimed;
    }
  }

  /**
   * Claims from `found`'s plan: all of it with one guarded PUT, or (`spread`) some of it; `undefined` when a
   * spread round claimed nothing and another round may.
   */
  async #claim(
    queryPath: string,
    updatePath: string,
    found: { plan: Array<[Row, Row]>; before: CatalogResponse },
    options: {
      spread: boolean;
      keys: string[] | undefined;
      claimRows: number;
      round: number;
      signal: AbortSignal | undefined;
    },
  ): Promise<StateChange | undefined> {
    const { spread, keys, claimRows, round, signal } = options;
    if (!spread || keys === undefined)
      return this.#claimAll(queryPath, updatePath, found.plan, found.before, signal);
    // A first claim that takes every candidate is guarded by the read's ETag: agents woken by one insert all
    // want the same few rows, and a loser's 412 commits nothing, so it wakes no agent (an unguarded claim
    // matching nothing is a committed write, and a notice). With more candidates than one claim takes, the
    // random picks rarely all lose, and a guard would fail on any write anywhere in the catalog.
    const guard = round === 1 && found.plan.length <= claimRows ? found.before : undefined;
    const batch = await this.#claimSome(queryPath, updatePath, found.plan, {
      claimRows,
      keys,
      guard,
      signal,
    });
    if (batch.length > 0 || round >= maxSpreadRounds) {
      if (batch.length === 0)
        this.logger.info(
          { queryPath, updatePath, rounds: round },
          "Every candidate tried was taken by another agent (or the update path matches none of them).",
        );
      return { idleEtag: null, batch };
    }
    return undefined;
  }

  /** GET the candidates and transform them: a plan, or no plan and the ETag to report as idle. */
  async #plan(
    queryPath: string,
    transform: RowTransform,
    idleEtag: string | null,
    signal: AbortSignal | undefined,
  ): Promise<{ plan?: Array<[Row, Row]>; before: CatalogResponse; etag: string | null }> {
    let before: CatalogResponse;
    try {
      before = await this.get(queryPath, { raiseNotModified: true, signal });
    } catch (error) {
      if (!(error instanceof NotModified)) throw error;
      before = error.response;
    }
    if (typeof idleEtag === "string" && idleEtag === before.etag) {
      this.logger.debug("No new state to process.");
      return { before, etag: idleEtag };
    }
    const plan: Array<[Row, Row]> = [];
    for (const row of candidateRows(before)) {
      const update = await transform(row);
      if (update !== null && update !== undefined) plan.push([row, update]);
    }
    if (plan.length === 0) {
      this.logger.debug("No candidate rows to update.");
      return { before, etag: before.etag };
    }
    return { plan, before, etag: null };
  }

  /** One PUT of every update, guarded by the GET's ETag. */
  async #claimAll(
    queryPath: string,
    updatePath: string,
    plan: Array<[Row, Row]>,
    before: CatalogResponse,
    signal: AbortSignal | undefined,
  ): Promise<StateChange> {
    const after = await this.put(updatePath, {
      json: plan.map(([, update]) => update),
      guardResponse: before,
      signal,
    });
    this.#claimed(queryPath, updatePath, plan, safeLength(after));
    return { idleEtag: null, batch: plan };
  }

  /**
   * Up to `claimRows` random updates in one conditional PUT: the pairs the server applied. With `guard`, the PUT
   * also carries its ETag as `If-Match`, and a 412 (the catalog changed since that read) claims nothing.
   */
  async #claimSome(
    queryPath: string,
    updatePath: string,
    plan: Array<[Row, Row]>,
    options: { claimRows: number; keys: string[]; guard?: CatalogResponse; signal?: AbortSignal },
  ): Promise<Array<[Row, Row]>> {
    const { claimRows, keys, guard, signal } = options;
    const chosen = shuffled(plan).slice(0, claimRows);
    let after: CatalogResponse;
    try {
      after = await this.put(updatePath, {
        json: chosen.map(([, update]) => update),
        guardResponse: guard,
        signal,
      });
    } catch (error) {
      if (!(error instanceof ConcurrentUpdate)) throw error;
      this.logger.debug({ tried: chosen.length }, "The catalog changed since the read: reading again.");
      return [];
    }
    let answer: unknown;
    try {
      answer = after.json();
    } catch {
      answer = [];
    }
    const won = appliedPairs(answer, chosen, keys);
    if (won.length > 0) this.#claimed(queryPath, updatePath, won, won.length);
    else this.logger.debug({ tried: chosen.length }, "Candidates taken by another agent.");
    return won;
  }

  #claimed(queryPath: string, updatePath: string, plan: Array<[Row, Row]>, updated: number): void {
    this.logger.info({ updated }, `Updated ${updated} ${updated === 1 ? "row" : "rows"} in catalog.`);
    this.logger.debug({ plan }, "Applied plan.");
    const event: ClaimedEvent = { queryPath, updatePath, batch: plan };
    this.emit("claimed", event);
  }

  /**
   * Runs `lookForWork` whenever there might be work, until `signal` aborts (resolves) or `lookForWork`
   * throws an error that retrying cannot fix (rejects with it). A {@link ConcurrentUpdate} calls it again at
   * once; an unavailable catalog (refused, reset or timed-out connections, 502, 503, 504) is an outage, retried
   * with backoff and reported by the `outage` and `recovered` events, until `maxOutageMs`. Each call has its
   * own AMQP connection (none with `amqpServer: null`); every AMQP failure falls back to polling, and binding
   * never delays a poll.
   *
   * @param lookForWork - finds and does work; a truthy result means "maybe more", so it is called again
   * @param options - see {@link BlockingPollOptions}
   */
  async blockingPoll(lookForWork: () => unknown, options: BlockingPollOptions = {}): Promise<void> {
    if (typeof lookForWork !== "function") {
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option lookForWork: ${typeof lookForWork} (expected a function)`,
      );
    }
    const parsed = parseOptions(pollOptionsSchema, options, ErrorCode.INVALID_OPTION, PollingCatalogError);
    const loop = new PollLoop({
      lookForWork: () => withPollSignal(parsed.signal, lookForWork),
      pollingMs: parsed.pollingMs,
      coalesceMs: parsed.coalesceMs,
      maxCoalesceMs: parsed.maxCoalesceMs,
      maxRetryDelayMs: parsed.maxRetryDelayMs,
      maxOutageMs: parsed.maxOutageMs,
      maxBindDelayMs: parsed.maxBindDelayMs,
      outageSummaryMs: parsed.outageSummaryMs,
      signal: parsed.signal,
      bind:
        this.#amqpUrls.length === 0
          ? undefined
          : (handlers, first, cancelled) =>
              NoticeSubscription.open(
                {
                  urls: this.#amqpUrls,
                  first,
                  exchange: this.noticeExchange,
                  logger: this.logger,
                  cancelled,
                },
                {
                  ...handlers,
                  onNotice: () => {
                    this.observeCommit();
                    handlers.onNotice();
                  },
                },
              ).then((subscription) => {
                // writes take turns on the newest live subscription (see writePacing)
                this.writeTurns = subscription.turns;
                return subscription;
              }),
      addresses: this.#amqpUrls.length,
      onWake: (event) => this.emit("wake", event),
      onAmqp: (event) => this.emit("amqp", event),
      onOutage: (event) => this.emit("outage", event),
      onRecovered: (event) => this.emit("recovered", event),
      logger: this.logger,
    });
    await loop.run();
  }
}

/** A copy of `items` in a uniformly random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

function candidateRows(response: CatalogResponse): Row[] {
  let rows: unknown;
  try {
    rows = response.json();
  } catch (cause) {
    throw badResponse(response, "is not JSON", cause);
  }
  if (!Array.isArray(rows)) throw badResponse(response, "is not a JSON array");
  // A transform is written for rows: a number, a string, null or an array among them is the server's fault.
  const index = rows.findIndex((row) => typeof row !== "object" || row === null || Array.isArray(row));
  if (index !== -1)
    throw badResponse(response, `is not a JSON array of objects (item ${index} is not an object)`);
  return rows as Row[];
}

function safeLength(response: CatalogResponse): number {
  try {
    const body = response.json();
    return Array.isArray(body) ? body.length : 0;
  } catch {
    return 0;
  }
}

function badResponse(response: CatalogResponse, problem: string, cause?: unknown): PollingCatalogError {
  return new PollingCatalogError(
    ErrorCode.BAD_RESPONSE,
    `the response of GET ${response.url} ${problem}`,
    cause === undefined ? undefined : { cause },
  );
}
