import type { Logger } from "@x/core";
import { clock } from "./clock.js";
import { type Scope, scopes } from "./context.js";
import { deadlines, type Timed } from "./deadlines.js";
import { ExecutionTimeout, type GuardError, MemoryLimitExceeded } from "./errors.js";
import { causeChain } from "./interrupt.js";
import { freshOwnSample, type Sampler } from "./memory.js";
import type { MemConfig, TimeConfig } from "./options.js";
import { ProcessGone } from "./process-info.js";
import { InProcessTarget, type Level, ownSignalAt, ownSignalNumbers, type Target } from "./targets.js";
import { type Tickable, tickerFor } from "./ticker.js";
import { type LadderSlot, Watchdog } from "./watchdog.js";

/** How often a TimeGuard activation looks whether the watchdog has sent a due own-process signal, in ms. */
const WATCHDOG_POLL_MS = 2;

/** What an activation needs from the guard that started it. */
export interface GuardHost {
  readonly config: TimeConfig | MemConfig;
  /** Activations that have not ended. */
  readonly active: Set<Activation>;
  /** Emits an event to every listener; a listener's exception is logged, never rethrown. */
  emitSafe(event: "interrupt" | "warning", payload: object): void;
}

/** How an activation starts. */
export interface ActivationInit {
  target: Target;
  /** Link to the innermost enclosing active scope (run, wrap, enter); `undefined` for watch. */
  parent: Scope | undefined;
  /** External signal: aborts the activation's signal with its reason (run), or ends it (watch). */
  signal?: AbortSignal | undefined;
  /** `"abort"` for run/enter, `"close"` for watch. */
  onExternal: "abort" | "close";
  /** An own-process sampler is measured at start without the per-pass cache. */
  ownProcess: boolean;
  /** Called once when the activation ends. */
  onEnd?: () => void;
}

/**
 * One guarded run: its own clock, escalation state, AbortSignal and memory baseline. Created by `run()`,
 * each call of a wrapped function, `enter()` and `watch()`.
 *
 * A TimeGuard activation is queued in the process's deadline queue for its next level's due time, so every
 * level is sent on time whatever `checkIntervalMs` is. `progress()` only moves the anchor: the entry is
 * re-queued lazily when it comes due early (see {@link Activation.progress}). A MemGuard activation is visited
 * by the shared ticker of its `checkIntervalMs`, which samples and sends the levels that are due.
 */
export class Activation implements Scope, Tickable, Timed {
  readonly host: GuardHost;
  readonly config: TimeConfig | MemConfig;
  readonly logger: Logger;
  readonly target: Target;
  readonly parent: Scope | undefined;
  readonly restartable: boolean;
  readonly hasSignal = true;
  ended = false;
  /** The error of the highest level sent so far (for `watch()`'s result). */
  topError: GuardError | null = null;
  /**
   * Set by a `run()` that gives up on its task at level 2 (`waitForTask: false`) until it settles: called with
   * the level-2 error once the level's events are out.
   */
  giveUp: ((error: GuardError) => void) | undefined;

  /** Time: the last (re)start. Memory: the first over-limit sample of the current excess (NaN: under). */
  #anchor: number;
  /** ms from the anchor to level 0. */
  readonly #first: number;
  /** ms between levels. */
  readonly #step: number;
  /** Highest level sent since the last restart or reset (-1: none). */
  #sent = -1;
  /** Level 2 was sent: nothing more happens. */
  #done = false;
  /** An asynchronous action or sample is under way. */
  #busy = false;
  /** Time: the deadline queue's bookkeeping (see deadlines.ts). */
  dueAt = Number.NaN;
  queueIndex = -1;
  #sampling = false;
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #children: Set<Activation> | undefined;
  #external: AbortSignal | undefined;
  #onExternal: (() => void) | undefined;
  #slot: LadderSlot | undefined;
  #onEnd: (() => void) | undefined;
  // memory
  #sampler: Sampler | undefined;
  #limit = Number.NaN;
  #observed = 0;
  #starting = false;

  constructor(host: GuardHost, init: ActivationInit) {
    this.host = host;
    this.config = host.config;
    this.logger = host.config.logger;
    this.target = init.target;
    this.parent = init.parent;
    this.#onEnd = init.onEnd;
    const config = this.config;
    if (config.kind === "time") {
      this.restartable = true;
      this.#anchor = clock();
      this.#first = config.timeoutMs;
      this.#step = config.graceMs;
    } else {
      this.restartable = false;
      this.#anchor = Number.NaN;
      this.#first = config.graceMs;
      this.#step = config.secondaryMs;
      // throws ERR_X_GUARD_UNSUPPORTED before anything is registered
      this.#sampler = init.target.sampler(config.metric);
    }

    if (init.parent instanceof Activation) init.parent.#adopt(this);
    if (init.signal !== undefined) this.#listen(init.signal, init.onExternal);
    // a watch whose signal was already aborted ended just now: nothing to register, nothing to guard
    if (this.ended) return;

    host.active.add(this);
    if (config.kind === "memory") tickerFor(config.checkIntervalMs).add(this);

    // own-process signals of an in-process activation come from the watchdog (see InProcessTarget)
    if (
      config.allowProcessSignals &&
      config.interruptType !== "exception" &&
      this.target instanceof InProcessTarget
    ) {
      this.#startLadder();
    }
    if (config.kind === "time") deadlines.schedule(this, this.#anchor + this.#first, this.#anchor);
    else {
      this.#starting = true;
      try {
        if (init.ownProcess && (config.metric === "rss" || config.metric === "heap")) {
          this.#onSample(freshOwnSample(config.metric));
        } else this.#sample();
      } finally {
        this.#starting = false;
      }
    }
  }

  #startLadder(): void {
    try {
      this.#slot = Watchdog.shared(this.logger).ladder(
        this.#anchor,
        this.#first,
        this.#step,
        ownSignalNumbers(this.config),
      );
      (this.target as InProcessTarget).viaWatchdog = true;
    } catch (error) {
      // without the watchdog, the main thread sends the signals itself when it gets to run
      this.logger.warn({ err: error }, "process-guard: the watchdog could not start");
    }
  }

  #listen(signal: AbortSignal, mode: "abort" | "close"): void {
    const handler = mode === "abort" ? () => this.abort(signal.reason) : () => this.end();
    if (signal.aborted) {
      handler();
      return;
    }
    this.#external = signal;
    this.#onExternal = handler;
    signal.addEventListener("abort", handler, { once: true });
  }

  /** A nested activation: it aborts with our reason when we abort. */
  #adopt(child: Activation): void {
    if (this.#aborted) {
      child.abort(this.#reason);
      return;
    }
    this.#children ??= new Set();
    this.#children.add(child);
  }

  /** The activation's signal, created on first use (most tasks never read it). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** The guard that started it. */
  get owner(): object {
    return this.host;
  }

  /** Aborts the signal once (later calls do nothing) and every nested activation with the same reason. */
  abort(reason: unknown): void {
    if (this.#aborted || this.ended) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    if (this.#children) for (const child of this.#children) child.abort(reason);
  }

  /**
   * Maps a rejection after our signal aborted: an `AbortError` with our reason along its `cause` chain becomes
   * the reason itself (what `timers/promises`, `events.once`, streams and `child_process` throw).
   */
  mapRejection(error: unknown): unknown {
    if (!this.#aborted || !(error instanceof Error) || error.name !== "AbortError") return error;
    for (const link of causeChain(error)) if (link === this.#reason) return this.#reason;
    return error;
  }

  /**
   * Restarts the time limit and resets the ladder; nothing after level 2 or the end.
   *
   * It re-arms nothing while the activation is queued for the new deadline or earlier: it comes due at the
   * old deadline, finds the level not yet due and queues itself for the new one. So a task that reports
   * progress thousands of times per timeout pays for one re-queueing per timeout, not one per call. Only an
   * entry queued later than the new deadline (for level 1 or 2 after an interrupt) is moved forward.
   */
  progress(): void {
    if (this.ended || this.#done || this.config.kind !== "time") return;
    const now = clock();
    this.#anchor = now;
    this.#sent = -1;
    this.#slot?.restart(now);
    const due = now + this.#first;
    if (!(this.queueIndex >= 0 && this.dueAt <= due)) deadlines.schedule(this, due, now);
  }

  /** Time: the deadline queue calls this once the time it was queued for has passed. */
  onDue(now: number): void {
    this.#advance(now);
  }

  /** Ends at once: no action and no event afterwards; the signal is never aborted afterwards. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.host.active.delete(this);
    if (this.config.kind === "memory") tickerFor(this.config.checkIntervalMs).delete(this);
    else deadlines.cancel(this);
    this.#sampler?.close?.();
    if (this.#external) this.#external.removeEventListener("abort", this.#onExternal!);
    if (this.parent instanceof Activation) this.parent.#children?.delete(this);
    this.#slot?.release();
    const onEnd = this.#onEnd;
    this.#onEnd = undefined;
    onEnd?.();
  }

  /** Runs `fn` inside this activation's async context. */
  enter<R>(fn: () => R): R {
    return scopes().run(this, fn);
  }

  tick(now: number): void {
    if (this.ended) return;
    if (this.config.kind === "memory") this.#sample();
    else this.#advance(now);
  }

  #sample(): void {
    if (this.#sampling || this.#done || this.ended) return;
    let value: number | Promise<number>;
    try {
      value = this.#sampler!();
    } catch (error) {
      this.#sampleFailed(error);
      return;
    }
    if (typeof value === "number") {
      this.#onSample(value);
      return;
    }
    this.#sampling = true;
    value.then(
      (bytes) => {
        this.#sampling = false;
        this.#onSample(bytes);
      },
      (error: unknown) => {
        this.#sampling = false;
        this.#sampleFailed(error);
      },
    );
  }

  #sampleFailed(error: unknown): void {
    if (this.ended) return;
    if (error instanceof ProcessGone) this.end();
    else this.logger.warn({ err: error }, "process-guard: a memory sample failed and was skipped");
  }

  #onSample(bytes: number): void {
    if (this.ended || this.#done) return;
    const config = this.config as MemConfig;
    if (Number.isNaN(this.#limit)) this.#limit = config.absolute ? config.maxBytes : bytes + config.maxBytes;
    if (bytes > this.#limit) {
      this.#observed = bytes;
      if (Number.isNaN(this.#anchor)) {
        this.#anchor = clock();
        this.#slot?.restart(this.#anchor);
      }
    } else if (bytes < this.#limit && !Number.isNaN(this.#anchor)) {
      this.#anchor = Number.NaN;
      this.#sent = -1;
      this.#slot?.restart(Number.NaN);
    }
    if (!this.#starting) this.#advance(clock());
    else if (!Number.isNaN(this.#anchor) && this.#first === 0) {
      // never act inside run()/watch() itself: the earliest action is on a later macrotask
      setImmediate(() => this.#advance(clock())).unref();
    }
  }

  /** Sends every level that is due, in order; a TimeGuard activation then arms its timer for the next one. */
  #advance(now: number): void {
    while (!this.#busy && !this.#done && !this.ended && !Number.isNaN(this.#anchor)) {
      const level = (this.#sent + 1) as Level;
      const due = this.#anchor + this.#first + level * this.#step;
      if (now < due) {
        if (this.restartable) deadlines.schedule(this, due, now);
        return;
      }
      // an own-process signal is the watchdog's to send; the event follows once it has
      if (this.#slot && !this.#slot.alive) this.#withoutWatchdog();
      if (this.#slot && ownSignalAt(this.config, level) !== undefined && this.#slot.sent < level) {
        // the watchdog wakes at the same due time: look again shortly
        if (this.restartable) deadlines.schedule(this, now + WATCHDOG_POLL_MS, now);
        return;
      }
      this.#fire(level, now);
    }
  }

  #fire(level: Level, now: number): void {
    const error = this.#error(level, now);
    if (level === 0) this.abort(error);
    let done: string | Promise<string>;
    try {
      done = this.target.act(level, error, () => this.ended);
    } catch (failure) {
      this.#actFailed(level, error, failure);
      return;
    }
    if (typeof done === "string") {
      this.#sentLevel(level, error, done, true);
      return;
    }
    this.#busy = true;
    const anchor = this.#anchor;
    done.then(
      (what) => {
        this.#busy = false;
        // a restart meanwhile leaves the ladder reset, but the level was sent: report it
        this.#sentLevel(level, error, what, anchor === this.#anchor);
        this.#advance(clock());
      },
      (failure: unknown) => {
        this.#busy = false;
        this.#actFailed(level, error, failure);
        this.#advance(clock());
      },
    );
  }

  /** A gone target ends the activation; any other failure is logged and the ladder goes on. */
  #actFailed(level: Level, error: GuardError, failure: unknown): void {
    if (failure instanceof ProcessGone) {
      this.end();
      return;
    }
    this.logger.error({ err: failure }, `process-guard: level ${level} failed`);
    this.#sentLevel(
      level,
      error,
      `nothing (it failed: ${(failure as Error)?.message ?? String(failure)})`,
      true,
    );
  }

  /** The watchdog worker died: the main thread sends the own-process signals itself from now on. */
  #withoutWatchdog(): void {
    this.logger.warn(
      "process-guard: the watchdog worker is gone; own-process signals now come from the main thread",
    );
    this.#slot = undefined;
    (this.target as InProcessTarget).viaWatchdog = false;
  }

  #error(level: Level, now: number): GuardError {
    const config = this.config;
    const taskLeftRunning = level === 2 && this.giveUp !== undefined;
    if (config.kind === "time") {
      return new ExecutionTimeout({
        level,
        limitMs: config.timeoutMs,
        elapsedMs: now - this.#anchor,
        taskLeftRunning,
      });
    }
    return new MemoryLimitExceeded({
      level,
      limitBytes: this.#limit,
      observedBytes: this.#observed,
      metric: config.metric,
      taskLeftRunning,
    });
  }

  #sentLevel(level: Level, error: GuardError, what: string, current: boolean): void {
    if (this.ended) return;
    if (current) this.#sent = level;
    if (this.topError === null || level >= (this.topError as ExecutionTimeout).level) this.topError = error;
    if (level === (this.config.ladder?.length ?? 3) - 1) this.#done = true;
    this.logger.debug({ escalation: level, err: error }, `process-guard: level ${level}: ${what}`);
    this.host.emitSafe("interrupt", { level, error, action: what });
    if (level === 2) {
      const note = this.target.warningNote?.();
      const message = `${error.message}: level 2 ${what}${note ? `; ${note}` : ""}`;
      this.logger.warn({ err: error }, `process-guard: ${message}`);
      this.host.emitSafe("warning", { level: 2, error, message });
      this.giveUp?.(error);
    }
  }
}
