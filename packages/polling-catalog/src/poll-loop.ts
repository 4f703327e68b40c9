import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { backoffDelay, type Logger, XError } from "@x/core";
import { Alarm } from "./alarm.js";
import { ErrorCode } from "./errors.js";
import type { AmqpEvent, OutageEvent, RecoveredEvent, WakeEvent, WakeReason } from "./events.js";
import type { NoticeHandlers, NoticeSubscription } from "./notice-subscription.js";
import { isOutageError } from "./outage.js";

/** What a {@link PollLoop} needs from its catalog. All durations in milliseconds. */
export interface PollLoopSettings {
  lookForWork: () => unknown;
  pollingMs: number;
  coalesceMs: number;
  maxCoalesceMs: number;
  maxRetryDelayMs: number;
  maxOutageMs: number;
  maxBindDelayMs: number;
  outageSummaryMs: number;
  signal: AbortSignal | undefined;
  /**
   * Binds at one of the addresses, trying them from index `first`; see {@link NoticeSubscription.open}.
   * `undefined`: no notices, the loop only polls.
   */
  bind:
    | ((handlers: NoticeHandlers, first: number, cancelled: () => boolean) => Promise<NoticeSubscription>)
    | undefined;
  /** How many broker addresses `bind` has: with several, a lost connection moves to the next one quickly. */
  addresses: number;
  onWake: (event: WakeEvent) => void;
  onAmqp: (event: AmqpEvent) => void;
  onOutage: (event: OutageEvent) => void;
  onRecovered: (event: RecoveredEvent) => void;
  logger: Logger;
}

/** The start drain waits this long at most for the first bind, so that its notices are not missed. */
const startBindGraceMs = 1_000;
/**
 * With several broker addresses, a connection lost after being up this long moves to the next address after
 * a short wait ({@link quickRebindMs}); one lost sooner waits the usual bind backoff, so that a flapping
 * cluster cannot make an agent reconnect in a loop.
 */
const quickRebindMinUpMs = 5_000;
/** The short wait before binding at the next address: drawn uniformly in this range, in ms. */
const quickRebindMs = { min: 100, max: 1_000 };
/** The first outage retry is drawn below this; each further one below twice the previous ceiling. */
const firstOutageRetryMs = 500;

const wakeLines: Record<WakeReason, string> = {
  start: "Draining on start.",
  rebind: "Draining after AMQP re-bind.",
  notice: "Woke up on change-notice.",
  "poll-timeout": "Woke up on poll timeout.",
  retry: "Retrying the drain after a catalog outage.",
};

interface Outage {
  since: number;
  failures: number;
  retryAt: number;
  /** When the next "still unavailable" summary is due. */
  summaryAt: number;
}

/**
 * One `blockingPoll` run: the hybrid notice + polling timing model. In AMQP mode it waits for a notice or
 * the polling period, coalesces, then drains; in polling mode it polls while bind attempts run beside it with
 * a jittered, capped backoff. A drain that fails because the catalog is unavailable starts an outage: the
 * drain is retried with full-jitter backoff until it succeeds (or `maxOutageMs` passes).
 */
export class PollLoop {
  readonly #s: PollLoopSettings;
  readonly #alarm = new Alarm();
  #subscription: NoticeSubscription | undefined;
  /** A bind attempt is in flight. */
  #binding = false;
  /** A bind succeeded since the last drain began: the next wake is `rebind`. */
  #bound = false;
  /** Set when the live subscription died; handled at the next wait. */
  #lost: Error | undefined;
  #stopped = false;
  #bindFailures = 0;
  #bindDue = 0;
  /** The index of the address the next bind tries first: the one after the node of the last lost connection. */
  #turn = 0;
  /** When the live subscription was bound. */
  #boundAt = 0;
  #outage: Outage | undefined;
  #pending = 0;
  #firstNoticeAt = 0;
  #lastNoticeAt = 0;
  #lastDrainEnd = 0;

  /** @param settings - see {@link PollLoopSettings} */
  constructor(settings: PollLoopSettings) {
    this.#s = settings;
  }

  /** Runs until the signal aborts (resolves) or `lookForWork` fails for good (rejects with its error). */
  async run(): Promise<void> {
    const { signal } = this.#s;
    if (signal?.aborted) return;
    const onAbort = () => this.#alarm.ring();
    signal?.addEventListener("abort", onAbort);
    try {
      if (this.#s.bind) this.#startBind();
      else this.#bindDue = Number.POSITIVE_INFINITY;
      const graceEnd = performance.now() + startBindGraceMs;
      while (this.#binding && !signal?.aborted && performance.now() < graceEnd)
        await this.#alarm.wait(graceEnd - performance.now());
      this.#bound = false;
      let wake: WakeEvent | undefined = { reason: "start", notices: 0 };
      while (wake && !signal?.aborted) {
        await this.#drain(wake);
        this.#lastDrainEnd = performance.now();
        wake = await this.#nextWake();
      }
    } finally {
      this.#stopped = true;
      signal?.removeEventListener("abort", onAbort);
      await this.#subscription?.close();
      this.#subscription = undefined;
    }
  }

  /** Starts one bind attempt beside the loop; its outcome rings the alarm. */
  #startBind(): void {
    const { bind } = this.#s;
    if (!bind) return;
    this.#binding = true;
    bind(
      {
        onNotice: () => this.#notice(),
        onLoss: (error) => {
          this.#lost = error;
          this.#alarm.ring();
        },
      },
      this.#turn,
      () => this.#stopped,
    ).then(
      (subscription) => {
        this.#binding = false;
        if (this.#stopped) {
          void subscription.close();
          return;
        }
        this.#subscription = subscription;
        this.#boundAt = performance.now();
        this.#bindFailures = 0;
        this.#lost = undefined;
        this.#pending = 0;
        this.#bound = true;
        this.#s.logger.info({ url: subscription.url }, "Using AMQP hybrid polling.");
        this.#s.onAmqp({ state: "up", url: subscription.url });
        this.#alarm.ring();
      },
      (error: unknown) => {
        this.#binding = false;
        if (this.#stopped) return;
        this.#bindFailures++;
        const retryInMs = this.#scheduleBind();
        this.#s.logger.warn(
          { error: toError(error).message, retryInMs: Math.round(retryInMs) },
          "AMQP bind failed; polling meanwhile.",
        );
        this.#s.onAmqp({ state: "down", error: toError(error), retryInMs });
        this.#alarm.ring();
      },
    );
  }

  /** Sets the next bind attempt after `#bindFailures` failures: about 5 × 5^(n-1) s, ±50 %, capped. */
  #scheduleBind(): number {
    const retryInMs = backoffDelay(this.#bindFailures - 1, {
      initialMs: 5_000,
      factor: 5,
      maxMs: this.#s.maxBindDelayMs,
      jitter: 0.5,
    });
    this.#bindDue = performance.now() + retryInMs;
    return retryInMs;
  }

  #notice(): void {
    const now = performance.now();
    if (this.#pending === 0) this.#firstNoticeAt = now;
    this.#pending++;
    this.#lastNoticeAt = now;
    this.#alarm.ring();
  }

  /** Waits for the next wake; `undefined` when aborted. */
  async #nextWake(): Promise<WakeEvent | undefined> {
    const { signal } = this.#s;
    for (;;) {
      if (signal?.aborted) return undefined;
      if (this.#lost) await this.#fallBack(this.#lost);
      if (this.#bound) {
        this.#bound = false;
        this.#pending = 0;
        return { reason: "rebind", notices: 0 };
      }
      const wake = this.#subscription ? await this.#waitInAmqpMode() : await this.#waitInPollingMode();
      if (wake) return wake;
    }
  }

  /**
   * The established connection died: one warning, back to polling, a bind attempt after the first backoff;
   * with several addresses, starting at the next one, and after a short wait when the connection had been up
   * for a while.
   */
  async #fallBack(error: Error): Promise<void> {
    this.#lost = undefined;
    this.#pending = 0;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    let retryInMs: number;
    const quick =
      subscription !== undefined &&
      this.#s.addresses > 1 &&
      performance.now() - this.#boundAt >= quickRebindMinUpMs;
    if (subscription) this.#turn = subscription.index + 1;
    if (quick) {
      // The next bind's failure counts as the first: the usual backoff then.
      this.#bindFailures = 0;
      retryInMs = quickRebindMs.min + Math.random() * (quickRebindMs.max - quickRebindMs.min);
      this.#bindDue = performance.now() + retryInMs;
    } else {
      this.#bindFailures = 1;
      retryInMs = this.#scheduleBind();
    }
    this.#s.logger.warn(
      { error: error.message, retryInMs: Math.round(retryInMs), url: subscription?.url },
      "Using basic polling due to AMQP communication problems.",
    );
    this.#s.onAmqp({ state: "down", error, retryInMs });
    await subscription?.close();
  }

  /** When the next drain is due without a notice: the polling period, or the outage retry. */
  #dueWithoutNotice(): { at: number; reason: WakeReason } {
    if (this.#outage) return { at: this.#outage.retryAt, reason: "retry" };
    return { at: this.#lastDrainEnd + this.#s.pollingMs, reason: "poll-timeout" };
  }

  /** AMQP mode: a notice or the polling period, then coalescing. `undefined` to re-evaluate the mode. */
  async #waitInAmqpMode(): Promise<WakeEvent | undefined> {
    const { signal, coalesceMs, maxCoalesceMs } = this.#s;
    const due = this.#dueWithoutNotice();
    let wakeStart: number;
    if (this.#pending > 0) wakeStart = this.#firstNoticeAt;
    else {
      const now = performance.now();
      if (now < due.at) {
        await this.#alarm.wait(due.at - now);
        return undefined;
      }
      wakeStart = due.at;
    }
    for (;;) {
      if (signal?.aborted || this.#lost) return undefined;
      const anchor = this.#pending > 0 ? Math.max(wakeStart, this.#lastNoticeAt) : wakeStart;
      const coalesced = Math.min(anchor + coalesceMs, wakeStart + maxCoalesceMs);
      const now = performance.now();
      if (now >= coalesced) break;
      await this.#alarm.wait(coalesced - now);
    }
    const notices = this.#pending;
    this.#pending = 0;
    return { reason: notices > 0 ? "notice" : due.reason, notices };
  }

  /** Polling mode: the next poll, or starting the next bind attempt (which the wait never awaits). */
  async #waitInPollingMode(): Promise<WakeEvent | undefined> {
    const now = performance.now();
    if (!this.#binding && now >= this.#bindDue) {
      this.#startBind();
      return undefined;
    }
    const due = this.#dueWithoutNotice();
    if (now >= due.at) return { reason: due.reason, notices: 0 };
    const until = this.#binding ? due.at : Math.min(due.at, this.#bindDue);
    await this.#alarm.wait(until - now);
    return undefined;
  }

  /** Emits the wake, logs it, and calls `lookForWork` while it answers truthy. */
  async #drain(wake: WakeEvent): Promise<void> {
    const { signal, logger, lookForWork } = this.#s;
    this.#s.onWake(wake);
    if (wake.reason === "notice") logger.info({ notices: wake.notices }, wakeLines.notice);
    // An outage's retries are summarised by #fail, not logged one by one.
    else if (wake.reason === "retry") logger.debug(wakeLines.retry);
    else logger.info(wakeLines[wake.reason]);
    for (;;) {
      let more: unknown;
      try {
        more = await lookForWork();
        this.#recover();
      } catch (error) {
        if (signal?.aborted) {
          // The abort itself ended a wait of the library: the expected way out, not worth a warning.
          if (error === signal.reason) logger.debug("lookForWork stopped by the abort.");
          else logger.warn({ error: toError(error).message }, "lookForWork failed after the abort; ignored.");
          return;
        }
        if (isOutageError(error)) {
          this.#fail(toError(error));
          return;
        }
        if (!XError.is(error, ErrorCode.CONCURRENT_UPDATE)) {
          logger.error(errorFields(error), "lookForWork failed with an error retrying cannot fix; stopping.");
          throw error;
        }
        this.#recover();
        logger.info("Handling a concurrent update: looking for work again.");
        more = true;
      }
      if (!more || signal?.aborted) return;
      await yieldToEventLoop();
      if (signal?.aborted) return;
    }
  }

  /**
   * A drain failed because the catalog is unavailable: starts or extends the outage, or gives up. Logs one
   * warning when the outage starts and a summary every `outageSummaryMs` while it lasts; each retry at debug.
   */
  #fail(error: Error): void {
    const { logger, outageSummaryMs } = this.#s;
    const now = performance.now();
    const outage = this.#outage ?? {
      since: now,
      failures: 0,
      retryAt: now,
      summaryAt: now + outageSummaryMs,
    };
    outage.failures++;
    const outageMs = Math.round(now - outage.since);
    if (now - outage.since >= this.#s.maxOutageMs) {
      logger.error(
        { ...errorFields(error), outageMs },
        "The catalog outage lasted longer than maxOutageMs; giving up.",
      );
      throw error;
    }
    const ceiling = Math.min(this.#s.maxRetryDelayMs, this.#s.pollingMs);
    const retryInMs = backoffDelay(outage.failures - 1, {
      initialMs: firstOutageRetryMs,
      factor: 2,
      maxMs: ceiling,
      jitter: "full",
    });
    outage.retryAt = now + retryInMs;
    const fields = { error: error.message, failures: outage.failures, retryInMs: Math.round(retryInMs) };
    if (!this.#outage) {
      logger.warn(fields, "The catalog is unavailable; retrying the drain until it is back.");
      this.#outage = outage;
      this.#s.onOutage({ error, retryInMs });
    } else if (now >= outage.summaryAt) {
      outage.summaryAt = now + outageSummaryMs;
      logger.warn({ ...fields, outageMs }, "The catalog is still unavailable.");
    } else logger.debug(fields, "The catalog is still unavailable; retrying the drain.");
  }

  /** A call succeeded: ends the outage, if any. */
  #recover(): void {
    const outage = this.#outage;
    if (!outage) return;
    this.#outage = undefined;
    const durationMs = performance.now() - outage.since;
    this.#s.logger.info(
      { durationMs: Math.round(durationMs), failures: outage.failures },
      "The catalog is back.",
    );
    this.#s.onRecovered({ durationMs, failures: outage.failures });
  }
}

/** An error's log fields: its name, message and code, and the messages down its `cause` chain. */
function errorFields(error: unknown): { error: string; code?: string; causes?: string[] } {
  const fields: { error: string; code?: string; causes?: string[] } = { error: String(error) };
  if (error instanceof Error) {
    fields.error = `${error.name}: ${error.message}`;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") fields.code = code;
    const causes: string[] = [];
    for (let cause = error.cause; cause !== undefined && causes.length < 5; ) {
      causes.push(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause));
      cause = cause instanceof Error ? cause.cause : undefined;
    }
    if (causes.length > 0) fields.causes = causes;
  }
  return fields;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
