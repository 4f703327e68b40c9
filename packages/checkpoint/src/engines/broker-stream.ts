import { Backoff, type Logger, sleep, XError } from "@x/core";
import { UNAVAILABLE_GRACE_MS } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "../errors.js";
import { type ConnectFailure, classifyConnectFailure } from "./connect-failure.js";

/** Where a broker session starts: at a position (inclusive), right after one, or at the adapter's configured start. */
export type SessionStart<P> = { at: P } | { after: P } | undefined;

/**
 * One read session on a broker, opened at a position: a consumer, a subscription, a read cursor. Adapters
 * implement it; {@link BrokerStream} drives it.
 */
export interface BrokerSession<R> {
  /** How many records the broker delivered to this session so far, read or not: counted where the client receives them. */
  readonly delivered: number;
  /** The next records the broker delivered, in order; empty when none came within the adapter's poll time. Rejects when the connection fails. */
  read(): Promise<readonly R[]>;
  /**
   * Stops the broker's delivery to this session: once it resolves, nothing more is delivered to it. Awaits a
   * read in flight.
   *
   * @param handedOut - how many records of the last batch were handed out (a group member acknowledges them;
   *   the others are delivered again); all of them when omitted
   */
  close(handedOut?: number): Promise<void>;
}

/**
 * What acts on every member of a consumer group, for an engine that reads as one member: a pause, a seek
 * and a resume of one member are the group's, and a member paused by another does not read.
 */
export interface GroupControl<P> {
  /**
   * Pauses every member: each stops reading before its next read. The pause lasts while this member (or
   * another paused one) lives, until {@link GroupControl.resume}.
   *
   * @param at - the position of the last record this member handed out (the one being handled)
   */
  pause(at?: P): Promise<void>;
  /** Lets every member read again. */
  resume(): Promise<void>;
  /** Moves the group back so that the record at `position` is delivered again (to some member). */
  seek(position: P): Promise<void>;
  /** Whether a member paused the group; checked before each read. */
  isPaused(): Promise<boolean>;
  /** This member leaves: it no longer keeps the group paused. */
  close(): void;
}

/** What an adapter gives {@link brokerStream}: how to open a session and where a record is. */
export interface BrokerEngine<R, P> {
  /** What the stream reads, for messages and log lines: `Redis stream "orders" at redis://127.0.0.1:6379`. */
  readonly describe: string;
  /** Opens a session that delivers records from `start` on. */
  open(start: SessionStart<P>): Promise<BrokerSession<R>>;
  /** The position of a record in its stream: what the checkpoint state holds, and what {@link BrokerStream.seek} takes. */
  positionOf(record: R): P;
  /** Releases what the engine owns (a connection it opened), after the last session was closed. Optional. */
  close?(): Promise<void>;
  /** Throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a value that is no position of this engine. */
  checkPosition(position: unknown): asserts position is P;
  /** The consumer group this engine reads as a member of; none when it reads the whole stream. */
  readonly group?: GroupControl<P> | undefined;
}

/** How often a member that another member paused looks whether the group may read again, in ms. */
const GROUP_PAUSE_POLL_MS = 200;

/**
 * The dependent of a `Checkpoint` on a real broker: an async iterator over a broker stream whose `pause()`
 * stops the broker's delivery (not only the loop that consumes it) and whose `seek()` moves it back to a
 * checkpointed position.
 *
 * - `pause()` closes the broker session and resolves once the broker has stopped delivering; records that
 *   were delivered but not yet handed out are dropped and read again after the resume. No session is opened
 *   while paused, so a pause survives a reconnect of the client and a restart of the broker.
 * - Reads that fail (a lost connection, a restarting broker) are retried with backoff from the position after
 *   the last record handed out, so nothing is skipped; each failure is logged at `warn`, naming the stream. An
 *   `XError` from the engine (a stream that does not exist, say) is not retried: `next()` rejects with it.
 * - Until a session has opened once, a broker that refuses the login fails at once
 *   (`ERR_X_CHECKPOINT_ACCESS_REFUSED`), and an address where nothing answers fails after 3 s
 *   (`ERR_X_CHECKPOINT_UNREACHABLE`): a mistake in the configuration is not retried for ever.
 * - `break` in a `for await`, `return()` and `close()` end the stream and close the session.
 */
export interface BrokerStream<R, P> extends AsyncIterableIterator<R, undefined, undefined> {
  /** The next record, once not paused; `{ done: true }` after `close()`. */
  next(): Promise<IteratorResult<R, undefined>>;
  /** Closes the stream; resolves `{ done: true, value }`. */
  return(value?: unknown): Promise<IteratorResult<R, undefined>>;
  /** The stream itself. */
  [Symbol.asyncIterator](): BrokerStream<R, P>;
  /** Stops the broker's delivery (a group member's: every member's); resolves once it has stopped. Idempotent. */
  pause(): Promise<void>;
  /** Lets `next()` read from the broker again (a group member: lets every member read). Idempotent. */
  resume(): void;
  /** Whether the stream is paused (a group member: by itself or by another member); false at first. */
  readonly paused: boolean;
  /**
   * Moves the stream so that the next record handed out is the one at `position` (or the first one after it,
   * when that one is gone). Call it from the recovery callback, which runs while the stream is paused.
   *
   * @throws (rejects with) `ERR_X_CHECKPOINT_INVALID_OPTION` for a value that is no position of this engine
   */
  seek(position: P): Promise<void>;
  /** The position of the last record handed out; undefined before the first one and after a seek. */
  readonly position: P | undefined;
  /** How many records the broker delivered to this client so far, handed out or not (a metric, and a proof of the pause). */
  readonly deliveries: number;
  /** Ends the stream and closes the broker session. Idempotent. */
  close(): Promise<void>;
  /** Calls {@link BrokerStream.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@link brokerStream}. */
export interface BrokerStreamOptions {
  /** Gets a `warn` line for each failed read or close. Default silent. */
  logger: Logger;
  /** Delays between retries of a failed read, in ms. */
  retry: { initialMs: number; maxMs: number };
}

const DONE: IteratorResult<never, undefined> = Object.freeze({ done: true, value: undefined });

/** Builds the {@link BrokerStream} of an adapter. */
export function brokerStream<R, P>(
  engine: BrokerEngine<R, P>,
  options: BrokerStreamOptions,
): BrokerStream<R, P> {
  return new Stream(engine, options);
}

class Stream<R, P> implements BrokerStream<R, P> {
  readonly #engine: BrokerEngine<R, P>;
  readonly #logger: Logger;
  readonly #backoff: Backoff;
  readonly #closing = new AbortController();
  /** Where a session starts when no record was handed out since the start or the last seek. */
  #start: SessionStart<P>;
  #session: Promise<BrokerSession<R>> | undefined;
  /** The records read and not yet handed out: `#buffer` from index `#next` on (no copy, no shift per record). */
  #buffer: readonly R[] = [];
  #next = 0;
  #paused = false;
  /** A group member: another member paused the group (seen before the last read). */
  #pausedByGroup = false;
  /** A group member: its `resume()` has not cleared the group's pause yet (it failed): tried before each read. */
  #resumeOwed = false;
  /** Set by the first `close()`: what it awaits. */
  #closed: Promise<void> | undefined;
  /** Bumped by every pause, seek and close: a read that started before is discarded. */
  #generation = 0;
  #position: P | undefined;
  /** The session open now, once opened, and the deliveries of the sessions before it. */
  #opened: BrokerSession<R> | undefined;
  #deliveredBefore = 0;
  #wakeUp: (() => void) | undefined;
  /** Whether a session opened once: from then on, a broker that does not answer is waited for. */
  #reached = false;
  /** Since when nothing answers at the broker's address, before it was reached. */
  #unavailableSince: number | undefined;
  /** How many `next()` calls are queued or running. */
  #waiting = 0;
  /** The `next()` calls, one after the other. */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(engine: BrokerEngine<R, P>, options: BrokerStreamOptions) {
    this.#engine = engine;
    this.#logger = options.logger;
    this.#backoff = new Backoff({ ...options.retry, jitter: 0.2 });
  }

  get paused(): boolean {
    return this.#paused || this.#pausedByGroup;
  }

  get position(): P | undefined {
    return this.#position;
  }

  get deliveries(): number {
    return this.#deliveredBefore + (this.#opened?.delivered ?? 0);
  }

  [Symbol.asyncIterator](): BrokerStream<R, P> {
    return this;
  }

  next(): Promise<IteratorResult<R, undefined>> {
    // The common case, a record already read and no call waiting before this one, skips the queue of calls.
    if (
      this.#waiting === 0 &&
      this.#closed === undefined &&
      !this.#paused &&
      this.#next < this.#buffer.length
    )
      return Promise.resolve(this.#take());
    // With no call queued or running, this one starts at once; otherwise after the one before.
    const result = this.#waiting++ === 0 ? this.#pull() : this.#turn.then(this.#pullNext);
    this.#turn = result.then(this.#done, this.#done);
    return result;
  }

  readonly #pullNext = () => this.#pull();
  readonly #done = () => {
    this.#waiting--;
  };

  async return(): Promise<IteratorResult<R, undefined>> {
    await this.close();
    return DONE;
  }

  async pause(): Promise<void> {
    this.#paused = true;
    this.#resumeOwed = false;
    const group = this.#engine.group;
    if (group)
      await group
        .pause(this.#position)
        .catch((error: unknown) =>
          this.#logger.warn(
            { stream: this.#engine.describe, error },
            "pausing the group failed: this member pauses alone",
          ),
        );
    await this.#interrupt();
  }

  resume(): void {
    this.#paused = false;
    // a group's pause is cleared before this member's next read (see #pull), retried until it is
    if (this.#engine.group) this.#resumeOwed = true;
    this.#wake();
  }

  async seek(position: P): Promise<void> {
    this.#engine.checkPosition(position);
    const group = this.#engine.group;
    if (group) await group.seek(position);
    else this.#start = { at: position };
    this.#position = undefined;
    await this.#interrupt();
  }

  async close(): Promise<void> {
    if (this.#closed) return this.#closed;
    this.#closing.abort();
    this.#closed = (async () => {
      this.#wake();
      this.#engine.group?.close();
      await this.#interrupt();
      await this.#engine.close?.();
    })();
    return this.#closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #pull(): Promise<IteratorResult<R, undefined>> {
    for (;;) {
      if (this.#closed) return DONE;
      if (this.#paused) {
        await new Promise<void>((resolve) => {
          this.#wakeUp = resolve;
        });
        continue;
      }
      if (this.#next < this.#buffer.length) return this.#take();
      // Reads one batch (inline rather than in a method of its own: one promise less per batch, and a batch
      // is one record on an engine that delivers them one at a time).
      const generation = this.#generation;
      try {
        this.#session ??= this.#engine.open(
          this.#position === undefined ? this.#start : { after: this.#position },
        );
        const session = await this.#session;
        this.#reached = true;
        this.#opened ??= session;
        if (this.#engine.group && (await this.#heldByGroup(this.#engine.group))) continue;
        const batch = await session.read();
        if (generation !== this.#generation) continue;
        this.#backoff.reset();
        this.#buffer = batch;
        this.#next = 0;
      } catch (error) {
        if (generation === this.#generation) await this.#readFailed(error);
      }
    }
  }

  /**
   * A group member, before each read: clears the group's pause its `resume()` owes, then, when another member
   * paused the group, stops reading until the pause is cleared. Resolves `true` when it waited.
   */
  async #heldByGroup(group: GroupControl<P>): Promise<boolean> {
    if (this.#resumeOwed) {
      await group.resume();
      this.#resumeOwed = false;
    }
    if (!(await group.isPaused())) {
      this.#pausedByGroup = false;
      return false;
    }
    if (!this.#pausedByGroup)
      this.#logger.debug({ stream: this.#engine.describe }, "another member paused the group");
    this.#pausedByGroup = true;
    await this.#closeSession();
    await sleep(GROUP_PAUSE_POLL_MS, { signal: this.#closing.signal }).catch(() => {});
    return true;
  }

  /** Hands out the next record of the buffer, which has one. */
  #take(): IteratorResult<R, undefined> {
    const record = this.#buffer[this.#next++] as R;
    this.#position = this.#engine.positionOf(record);
    return { done: false, value: record };
  }

  /** After a failed read: rethrows an `XError`, or fails fast, or logs and waits before the retry. */
  async #readFailed(error: unknown): Promise<void> {
    if (XError.is(error)) {
      await this.#closeSession();
      throw error;
    }
    const delayMs = this.#backoff.next();
    const failure = classifyConnectFailure(error);
    await this.#closeSession();
    if (!this.#reached) await this.#failFast(failure, delayMs, error);
    this.#logger.warn(
      { stream: this.#engine.describe, reason: failure.reason, retryInMs: Math.round(delayMs) },
      "broker read failed: reopening",
    );
    await sleep(delayMs, { signal: this.#closing.signal }).catch(() => {});
  }

  /**
   * Before the broker was ever reached: throws for a refusal, and for an address where nothing has answered
   * for {@link UNAVAILABLE_GRACE_MS} (releasing what the engine opened).
   */
  async #failFast(failure: ConnectFailure, delayMs: number, cause: unknown): Promise<void> {
    const now = Date.now();
    this.#unavailableSince = failure.kind === "unavailable" ? (this.#unavailableSince ?? now) : undefined;
    let code: ErrorCode | undefined;
    if (failure.kind === "refused") code = ErrorCode.ACCESS_REFUSED;
    else if (
      this.#unavailableSince !== undefined &&
      now + delayMs - this.#unavailableSince > UNAVAILABLE_GRACE_MS
    )
      code = ErrorCode.UNREACHABLE;
    if (code === undefined) return;
    await this.#engine.close?.();
    throw new CheckpointError(code, `cannot read the ${this.#engine.describe}: ${failure.reason}`, { cause });
  }

  /** Discards what was read and closes the session, so that the broker stops delivering. */
  async #interrupt(): Promise<void> {
    this.#generation++;
    const handedOut = this.#next;
    this.#buffer = [];
    this.#next = 0;
    await this.#closeSession(handedOut);
  }

  /** Closes the session; `handedOut` records of its last batch were handed out (all when omitted). */
  async #closeSession(handedOut?: number): Promise<void> {
    const session = this.#session;
    if (!session) return;
    this.#session = undefined;
    const opened = await session.catch(() => undefined); // a failed open was already reported by its read
    if (!opened) return;
    try {
      await opened.close(handedOut);
    } catch (error) {
      this.#logger.warn({ error }, "closing the broker session failed");
    }
    if (this.#opened === opened) this.#opened = undefined;
    this.#deliveredBefore += opened.delivered;
  }

  #wake(): void {
    const wakeUp = this.#wakeUp;
    this.#wakeUp = undefined;
    wakeUp?.();
  }
}
