import { type Logger, XError } from "@x/core";
import { ErmrestCatalog, PollingErmrestCatalog, type Row } from "@x/polling-catalog";
import { type FakeErmrest, startFakeErmrest } from "@x/polling-catalog/testing";
import type { EnrichedResult, ResultSink } from "./results-stage.js";

/** What the catalog stage did. */
export interface CatalogReport {
  /** Follow-up rows inserted (one per job that did not succeed). */
  followUps: number;
  /** Rows claimed and then marked done, per agent. */
  done: Record<string, number>;
  /** Claims that lost the race to another agent (HTTP 412 on the ETag-guarded PUT), retried by the agent. */
  conflicts: number;
  /** Rows claimed by more than one agent (must be 0: the ETag guard prevents it). */
  claimedTwice: number;
  /** Why the agents woke up: change notices, the start, polling timeouts, re-binds. */
  wakes: Record<string, number>;
}

const TABLE = "demo:FollowUp";
const CANDIDATES = `/entity/${TABLE}/State=new?limit=4`;
const CLAIM = `/attributegroup/${TABLE}/RID;State,Agent`;
const FINISH = `/attributegroup/${TABLE}/RID;State`;
const AGENTS = ["agent-1", "agent-2"];

const reasonOf = (exitCode: number) =>
  exitCode === 124 ? "timed out" : exitCode === 125 ? "memory limit" : `exit ${exitCode}`;

/**
 * Follow-up work in an ERMrest catalog. Every job that did not succeed is inserted as a `new` row of
 * `demo:FollowUp` in the in-process fake ERMrest (which publishes a change notice on RabbitMQ after each
 * write, as ERMrest does). Two @x/polling-catalog agents run `blockingPoll`: woken by the notices, each
 * claims up to four rows with `stateChangeOnce` (GET, then a PUT guarded by the GET's ETag) and marks them
 * `done`. A claim that loses the race gets 412, and the agent simply looks again.
 */
export class CatalogStage implements ResultSink {
  readonly #fake: FakeErmrest;
  readonly #poster: ErmrestCatalog;
  readonly #stop = new AbortController();
  readonly #polls: Promise<void>[] = [];
  #queued: Row[] = [];
  #posting: Promise<void> = Promise.resolve();
  #postError: unknown;
  #agentError: unknown;
  #followUps = 0;
  #claims = new Map<string, number>();
  #finished = new Set<string>();
  #onFinished: (() => void) | undefined;
  #report: CatalogReport = { followUps: 0, done: {}, conflicts: 0, claimedTwice: 0, wakes: {} };
  #closed: Promise<void> | undefined;

  private constructor(fake: FakeErmrest, url: string, noticeExchange: string, logger: Logger) {
    this.#fake = fake;
    const binding = { scheme: "http" as const, server: fake.server, catalogId: fake.catalogId, logger };
    this.#poster = new ErmrestCatalog(binding);
    for (const name of AGENTS) {
      const agent = new PollingErmrestCatalog({ ...binding, amqpServer: url, noticeExchange });
      agent.on("wake", ({ reason }) => {
        this.#report.wakes[reason] = (this.#report.wakes[reason] ?? 0) + 1;
      });
      this.#report.done[name] = 0;
      const poll = agent.blockingPoll(this.#agentLoop(agent, name), {
        pollingMs: 1_000,
        coalesceMs: 50,
        signal: this.#stop.signal,
      });
      poll.catch((error: unknown) => {
        this.#agentError ??= error;
        this.#onFinished?.();
      });
      this.#polls.push(poll);
    }
  }

  /** Starts the fake catalog (publishing notices on `noticeExchange` at `url`) and the agents. */
  static async start(options: {
    url: string;
    noticeExchange: string;
    logger: Logger;
  }): Promise<CatalogStage> {
    const { url, noticeExchange, logger } = options;
    const fake = await startFakeErmrest({
      tables: { [TABLE]: { key: ["Job"], columns: ["Job", "Reason", "State", "Agent"] } },
      amqpUrl: url,
      noticeExchange,
    });
    return new CatalogStage(fake, url, noticeExchange, logger);
  }

  /** One agent's `lookForWork`: claim a few rows, handle them, report whether there may be more. */
  #agentLoop(agent: PollingErmrestCatalog, name: string): () => Promise<boolean> {
    let idleEtag: string | null = null;
    return async () => {
      try {
        const change = await agent.stateChangeOnce(
          CANDIDATES,
          CLAIM,
          (row) => ({ RID: row.RID, State: "claimed", Agent: name }),
          idleEtag,
        );
        idleEtag = change.idleEtag;
        if (change.batch.length === 0) return false;
        for (const [row] of change.batch) {
          const job = String(row.Job);
          this.#claims.set(job, (this.#claims.get(job) ?? 0) + 1);
        }
        await agent.put(FINISH, { json: change.batch.map(([row]) => ({ RID: row.RID, State: "done" })) });
        for (const [row] of change.batch) this.#finished.add(String(row.Job));
        this.#report.done[name] = (this.#report.done[name] ?? 0) + change.batch.length;
        this.#onFinished?.();
        return true;
      } catch (error) {
        if (XError.is(error, "ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE")) this.#report.conflicts++;
        throw error;
      }
    };
  }

  add(result: EnrichedResult, correction: boolean): void {
    if (correction || result.exitCode === 0) return;
    this.#followUps++;
    this.#queued.push({ Job: result.job.attrPath, Reason: reasonOf(result.exitCode), State: "new" });
    if (this.#queued.length === 1) queueMicrotask(() => this.#post());
  }

  /** Inserts the queued rows in one POST, after the previous one. */
  #post(): void {
    const rows = this.#queued;
    this.#queued = [];
    if (rows.length === 0) return;
    this.#posting = this.#posting
      .then(() => this.#poster.post(`/entity/${TABLE}`, { json: rows }))
      .then(
        () => {},
        (error: unknown) => {
          this.#postError ??= error;
        },
      );
  }

  /** Waits until every follow-up row is done (or `signal` aborts), then stops the agents. */
  async finish(signal: AbortSignal): Promise<CatalogReport> {
    this.#post();
    await this.#posting;
    if (this.#postError !== undefined) throw this.#postError;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (signal.aborted) reject(signal.reason);
        else if (this.#agentError !== undefined) reject(this.#agentError);
        else if (this.#finished.size >= this.#followUps) resolve();
        else return;
        this.#onFinished = undefined;
        signal.removeEventListener("abort", check);
      };
      this.#onFinished = check;
      signal.addEventListener("abort", check, { once: true });
      check();
    });
    this.#stop.abort();
    await Promise.all(this.#polls);
    this.#report.followUps = this.#followUps;
    this.#report.claimedTwice = [...this.#claims.values()].filter((count) => count > 1).length;
    const rows = this.#fake.rows(TABLE);
    const notDone = rows.filter((row) => row.State !== "done").length;
    if (rows.length !== this.#followUps || notDone > 0) {
      throw new Error(`the catalog holds ${rows.length} follow-up rows, ${notDone} not done`);
    }
    return { ...this.#report, done: { ...this.#report.done }, wakes: { ...this.#report.wakes } };
  }

  /** Stops the agents and the fake catalog. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      await Promise.allSettled(this.#polls);
      await this.#fake.close();
    })();
    return this.#closed;
  }
}
