import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { type Logger, XError } from "@x/core";
import { Alarm } from "./alarm.js";
import { ErrorCode } from "./errors.js";
import type { AmqpEvent, WakeEvent, WakeReason } from "./events.js";
import type { NoticeHandlers, NoticeSubscription } from "./notice-subscription.js";

/** What a {@link PollLoop} needs from its catalog. All durations in milliseconds. */
export interface PollLoopSettings {
  lookForWork: () => unknown;
  pollingMs: number;
  coalesceMs: number;
  maxCoalesceMs: number;
  signal: AbortSignal | undefined;
  bind: (handlers: NoticeHandlers) => Promise<NoticeSubscription>;
  onWake: (event: WakeEvent) => void;
  onAmqp: (event: AmqpEvent) => void;
  logger: Logger;
}

/** The largest exponent of the bind backoff: attempts every 5^6 s = 15625 s at most. */
const maxBackoffExponent = 6;

const wakeLines: Record<WakeReason, string> = {
  start: "Draining on start.",
  rebind: "Draining after AMQP re-bind.",
  notice: "Woke up on change-notice.",
  "poll-timeout": "Woke up on poll timeout.",
};

/**
 * One `blockingPoll` run: the hybrid notice + polling timing model. In AMQP mode it waits for a notice or
 * the polling period, coalesces, then drains; in polling mode it polls and retries the bind with a
 * 5^n s backoff.
 */
export class PollLoop {
  readonly #s: PollLoopSettings;
  readonly #alarm = new Alarm();
  #subscription: NoticeSubscription | undefined;
  /** Set when the live subscription died; handled at the next wait. */
  #lostAt: { error: Error; time: number } | undefined;
  #failures = 0;
  #failedAt = 0;
  #pending = 0;
  #firstNoticeAt = 0;
  #lastNoticeAt = 0;
  #lastDrainEnd = 0;

  /** @param settings - see {@link PollLoopSettings} */
  constructor(settings: PollLoopSettings) {
    this.#s = settings;
  }

  /** Runs until the signal aborts (resolves) or `lookForWork` fails (rejects with its error). */
  async run(): Promise<void> {
    const { signal } = this.#s;
    if (signal?.aborted) return;
    const onAbort = () => this.#alarm.ring();
    signal?.addEventListener("abort", onAbort);
    try {
      await this.#bind();
      let wake: WakeEvent | undefined = { reason: "start", notices: 0 };
      while (wake && !signal?.aborted) {
        await this.#drain(wake);
        this.#lastDrainEnd = performance.now();
        wake = await this.#nextWake();
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      await this.#subscription?.close();
      this.#subscription = undefined;
    }
  }

  /** Tries one bind; on failure counts it and emits `amqp` down. An abort abandons the attempt. */
  async #bind(): Promise<boolean> {
    const { logger, signal } = this.#s;
    const binding = this.#s.bind({
      onNotice: () => this.#notice(),
      onLoss: (error) => {
        this.#lostAt = { error, time: performance.now() };
        this.#alarm.ring();
      },
    });
    let subscription: NoticeSubscription | undefined;
    try {
      subscription = await untilAborted(binding, signal);
    } catch (error) {
      this.#fail(toError(error), performance.now(), this.#failures + 1);
      return false;
    }
    if (!subscription) {
      binding.then(
        (late) => late.close(),
        () => {},
      );
      return false;
    }
    this.#subscription = subscription;
    this.#failures = 0;
    this.#lostAt = undefined;
    this.#pending = 0;
    logger.info("Using AMQP hybrid polling.");
    this.#s.onAmqp({ state: "up" });
    return true;
  }

  #fail(error: Error, at: number, failures: number): void {
    this.#failures = failures;
    this.#failedAt = at;
    const retryInMs = this.#retryDelayMs();
    this.#s.logger.warn({ error: error.message, retryInMs }, "AMQP bind failed; polling meanwhile.");
    this.#s.onAmqp({ state: "down", error, retryInMs });
  }

  #retryDelayMs(): number {
    return 5 ** Math.min(this.#failures, maxBackoffExponent) * 1000;
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
      if (this.#lostAt) await this.#fallBack(this.#lostAt);
      if (this.#subscription) {
        const wake = await this.#waitInAmqpMode();
        if (wake) return wake;
      } else {
        const wake = await this.#waitInPollingMode();
        if (wake) return wake;
      }
    }
  }

  async #fallBack(lost: { error: Error; time: number }): Promise<void> {
    this.#s.logger.warn(
      { error: lost.error.message },
      "Using basic polling due to AMQP communication problems.",
    );
    this.#lostAt = undefined;
    this.#pending = 0;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    await subscription?.close();
    this.#fail(lost.error, lost.time, 1);
  }

  /** AMQP mode: a notice or the polling period, then coalescing. `undefined` to re-evaluate the mode. */
  async #waitInAmqpMode(): Promise<WakeEvent | undefined> {
    const { signal, pollingMs, coalesceMs, maxCoalesceMs } = this.#s;
    let wakeStart: number;
    if (this.#pending > 0) wakeStart = this.#firstNoticeAt;
    else {
      const pollDue = this.#lastDrainEnd + pollingMs;
      const now = performance.now();
      if (now < pollDue) {
        await this.#alarm.wait(pollDue - now);
        return undefined;
      }
      wakeStart = pollDue;
    }
    for (;;) {
      if (signal?.aborted || this.#lostAt) return undefined;
      const anchor = this.#pending > 0 ? Math.max(wakeStart, this.#lastNoticeAt) : wakeStart;
      const due = Math.min(anchor + coalesceMs, wakeStart + maxCoalesceMs);
      const now = performance.now();
      if (now >= due) break;
      await this.#alarm.wait(due - now);
    }
    const notices = this.#pending;
    this.#pending = 0;
    return { reason: notices > 0 ? "notice" : "poll-timeout", notices };
  }

  /** Polling mode: the next poll or the next bind attempt, whichever is due first. */
  async #waitInPollingMode(): Promise<WakeEvent | undefined> {
    const pollDue = this.#lastDrainEnd + this.#s.pollingMs;
    const bindDue = this.#failedAt + this.#retryDelayMs();
    const due = Math.min(pollDue, bindDue);
    const now = performance.now();
    if (now < due) {
      await this.#alarm.wait(due - now);
      return undefined;
    }
    if (bindDue <= pollDue) {
      if (await this.#bind()) return { reason: "rebind", notices: 0 };
      return undefined;
    }
    return { reason: "poll-timeout", notices: 0 };
  }

  /** Emits the wake, logs it, and calls `lookForWork` while it answers truthy. */
  async #drain(wake: WakeEvent): Promise<void> {
    const { signal, logger, lookForWork } = this.#s;
    this.#s.onWake(wake);
    if (wake.reason === "notice") logger.info({ notices: wake.notices }, wakeLines.notice);
    else logger.info(wakeLines[wake.reason]);
    for (;;) {
      let more: unknown;
      try {
        more = await lookForWork();
      } catch (error) {
        if (signal?.aborted) {
          logger.warn({ error: toError(error).message }, "lookForWork failed after the abort; ignored.");
          return;
        }
        if (!XError.is(error, ErrorCode.CONCURRENT_UPDATE)) throw error;
        logger.info("Handling a concurrent update: looking for work again.");
        more = true;
      }
      if (!more || signal?.aborted) return;
      await yieldToEventLoop();
      if (signal?.aborted) return;
    }
  }
}

/** The promise's value, or `undefined` as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
