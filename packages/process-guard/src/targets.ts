import type { ChildProcess } from "node:child_process";
import type { Worker } from "node:worker_threads";
import type { Logger } from "@x/core";
import type { GuardError, MemoryMetric } from "./errors.js";
import { ownSampler, pidSampler, type Sampler, workerSampler } from "./memory.js";
import type { CommonConfig, InterruptType } from "./options.js";
import { isCode, ownPgid, ProcessGone, pgidOf } from "./process-info.js";

const { constants } = process.getBuiltinModule("node:os");

/** An escalation level. */
export type Level = 0 | 1 | 2;

/** What a guard acts on, and how each level acts on it. */
export interface Target {
  /** Takes the action of `level`; returns what it did, in words. May throw or reject `ProcessGone`. */
  act(level: Level, error: GuardError, isEnded: () => boolean): string | Promise<string>;
  /** A memory sampler for `metric`; throws `ERR_X_GUARD_UNSUPPORTED` for a combination that cannot work. */
  sampler(metric: MemoryMetric): Sampler;
  /** Sentence added to the level-2 warning, if any. */
  warningNote?(): string | undefined;
}

/** What the `"x-guard:interrupt"` message and event carry as `reason`. */
export type InterruptReason = "timeout" | "memory";

/** The message a child (over IPC) or a worker (postMessage) receives at a cooperative level. */
export interface InterruptMessage {
  type: "x-guard:interrupt";
  reason: InterruptReason;
  level: Level;
}

type Signal = "SIGINT" | "SIGTERM" | "SIGKILL";

function lastSignal(config: CommonConfig): Signal {
  return config.sendKill ? "SIGKILL" : "SIGTERM";
}

/** The signal an in-process activation sends to our own process at `level`, or `undefined`. */
export function ownSignalAt(config: CommonConfig, level: Level): Signal | undefined {
  const type: InterruptType = config.interruptType;
  if (type === "exception") return undefined;
  if (level === 2) return lastSignal(config);
  if (type === "signal") return level === 0 ? "SIGINT" : "SIGTERM";
  return level === 1 ? "SIGINT" : undefined;
}

/** Signal numbers of the in-process ladder, for the watchdog (0: none). */
export function ownSignalNumbers(config: CommonConfig): [number, number, number] {
  const number = (level: Level) => {
    const signal = ownSignalAt(config, level);
    return signal === undefined ? 0 : constants.signals[signal];
  };
  return [number(0), number(1), number(2)];
}

const processOff = "nothing to our own process (allowProcessSignals is false)";

/**
 * `run()`, wrapped calls and `enter()`: the abort happens at level 0 for every type (the activation does it);
 * own-process signals come from the watchdog when `allowProcessSignals` is set.
 */
export class InProcessTarget implements Target {
  /** True when the watchdog sends the own-process signals (it has acted when `act` runs). */
  viaWatchdog = false;

  constructor(readonly config: CommonConfig) {}

  act(level: Level): string {
    const signal = ownSignalAt(this.config, level);
    const abort = level === 0 ? "aborted the signal" : undefined;
    let sent: string | undefined;
    if (signal !== undefined) {
      if (!this.config.allowProcessSignals) sent = processOff;
      else if (this.viaWatchdog) sent = `${signal} to our own process ${process.pid} (from the watchdog)`;
      else sent = sendOwnSignal(signal, this.config.logger);
    }
    if (abort && sent) return `${abort}; sent ${sent}`;
    if (abort) return abort;
    if (sent) return `sent ${sent}`;
    return "nothing more (interruptType exception: the signal was aborted at level 0)";
  }

  sampler(metric: MemoryMetric): Sampler {
    return ownSampler(metric);
  }
}

function sendOwnSignal(signal: Signal, logger: Logger): string {
  try {
    process.kill(process.pid, signal);
    return `${signal} to our own process ${process.pid}`;
  } catch (error) {
    logger.warn({ err: error }, `process-guard: could not send ${signal} to our own process`);
    return `nothing (${signal} to our own process failed)`;
  }
}

/**
 * A `ChildProcess` or `{ pid }`: the cooperative step is an IPC message when the child has a channel, else
 * SIGINT. Signals go to the process group when the target leads one (never to our own group).
 */
export class ProcessTarget implements Target {
  /** The process group that received a signal from this guard, for the sweep after the leader exits. */
  signalledGroup: number | undefined;

  constructor(
    readonly pid: number,
    readonly child: ChildProcess | undefined,
    readonly reason: InterruptReason,
    readonly config: CommonConfig,
  ) {}

  act(level: Level, _error: GuardError, isEnded: () => boolean): string | Promise<string> {
    const ladder = this.config.ladder;
    if (ladder !== undefined) return this.#signal(ladder[level]!, isEnded);
    const type = this.config.interruptType;
    let cooperative: boolean;
    let signal: Signal;
    if (level === 2) {
      cooperative = type === "exception";
      signal = lastSignal(this.config);
    } else if (type === "exception") {
      cooperative = true;
      signal = "SIGINT";
    } else if (type === "signal") {
      cooperative = false;
      signal = level === 0 ? "SIGINT" : "SIGTERM";
    } else {
      cooperative = level === 0;
      signal = "SIGINT";
    }
    if (cooperative) {
      if (this.child?.connected) return this.#message(level);
      signal = "SIGINT";
    }
    return this.#signal(signal, isEnded);
  }

  #message(level: Level): string {
    const message: InterruptMessage = { type: "x-guard:interrupt", reason: this.reason, level };
    this.child!.send(message, (error) => {
      if (error) this.config.logger.warn({ err: error }, "process-guard: the interrupt message was not sent");
    });
    return `sent the x-guard:interrupt message to pid ${this.pid} over IPC`;
  }

  #signal(signal: NodeJS.Signals | number, isEnded: () => boolean): string | Promise<string> {
    const known = this.config.targetGroup;
    if (known !== undefined) return this.#send(signal, known === "group");
    const pgid = pgidOf(this.pid);
    const own = ownPgid();
    if (typeof pgid === "number" && typeof own === "number") return this.#kill(signal, pgid, own);
    return Promise.all([pgid, own]).then(([group, ours]) =>
      isEnded() ? "nothing (the guard ended meanwhile)" : this.#kill(signal, group, ours),
    );
  }

  #kill(signal: NodeJS.Signals | number, pgid: number, ownGroup: number): string {
    return this.#send(signal, pgid === this.pid && pgid !== ownGroup);
  }

  #send(signal: NodeJS.Signals | number, group: boolean): string {
    const what = group ? `process group ${this.pid}` : `pid ${this.pid}`;
    try {
      process.kill(group ? -this.pid : this.pid, signal);
    } catch (error) {
      if (isCode(error, "ESRCH")) throw new ProcessGone(this.pid);
      this.config.logger.warn({ err: error }, `process-guard: could not send ${signal} to ${what}`);
      return `nothing (${signal} to ${what} failed: ${(error as Error).message})`;
    }
    if (group) this.signalledGroup = this.pid;
    // as timeout(1): a stopped group (a background job that read the terminal) must wake up to act on it
    if (
      this.config.targetGroup === "group" &&
      !["SIGKILL", "SIGCONT", constants.signals.SIGKILL, constants.signals.SIGCONT].includes(signal)
    ) {
      try {
        process.kill(-this.pid, "SIGCONT");
      } catch {}
    }
    return `${signal} to ${what}`;
  }

  /** SIGKILL to the group this guard signalled, once its leader has exited. ESRCH is ignored. */
  sweep(): void {
    if (this.signalledGroup === undefined) return;
    try {
      process.kill(-this.signalledGroup, "SIGKILL");
      this.config.logger.debug(`process-guard: swept process group ${this.signalledGroup}`);
    } catch (error) {
      if (!isCode(error, "ESRCH")) {
        this.config.logger.warn({ err: error }, "process-guard: the group sweep failed");
      }
    }
    this.signalledGroup = undefined;
  }

  sampler(metric: MemoryMetric): Sampler {
    return pidSampler(this.pid, metric);
  }
}

/** A `Worker`: a posted message, then `terminate()`, then (when allowed) a signal to our own process. */
export class WorkerTarget implements Target {
  constructor(
    readonly worker: Worker,
    readonly reason: InterruptReason,
    readonly config: CommonConfig,
  ) {}

  act(level: Level): string {
    const type = this.config.interruptType;
    if (type === "exception" || (type === "exception_then_signal" && level === 0)) {
      const message: InterruptMessage = { type: "x-guard:interrupt", reason: this.reason, level };
      this.worker.postMessage(message);
      return "posted the x-guard:interrupt message to the worker";
    }
    if ((type === "signal" && level === 0) || (type === "exception_then_signal" && level === 1)) {
      this.worker.terminate().catch((error: unknown) => {
        this.config.logger.warn({ err: error }, "process-guard: worker.terminate() failed");
      });
      return "called worker.terminate()";
    }
    if (level === 1) return "nothing (the worker was terminated at level 0)";
    const signal = lastSignal(this.config);
    return this.config.allowProcessSignals ? `sent ${sendOwnSignal(signal, this.config.logger)}` : processOff;
  }

  warningNote(): string | undefined {
    if (this.worker.threadId === -1) return undefined;
    return "the worker is still alive: terminate() cannot stop a blocking native call";
  }

  sampler(metric: MemoryMetric): Sampler {
    return workerSampler(this.worker, metric);
  }
}
