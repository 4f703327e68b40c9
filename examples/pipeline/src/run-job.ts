import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { type Logger, sleep } from "@x/core";
import {
  ExecutionTimeout,
  InterruptType,
  type MemGuard,
  memGuard,
  type TimeGuard,
  type TimeWatchHandle,
  timeGuard,
} from "@x/process-guard";
import type { JobSpec } from "./plan.js";

/** Limits every job runs under. */
export interface JobLimits {
  /** Time budget once the job has started, in ms. */
  timeoutMs: number;
  /** Time between escalation levels, in ms. */
  graceMs: number;
  /** Memory budget of a command job (its RSS), in bytes. */
  maxMemoryBytes: number;
  logger: Logger;
}

/** How a job ended, as the worker reports it to the supervisor. */
export interface JobOutcome {
  job: JobSpec;
  /** 0 success, 1 failure, 124 stopped by the time limit, 125 stopped by the memory limit, 128+n killed by signal n. */
  exitCode: number;
  /** Wall time of the job, in ms. */
  ms: number;
}

/** What the guards did, counted from their `interrupt` events. */
export interface GuardActions {
  /** In-process jobs whose AbortSignal the TimeGuard aborted. */
  aborts: number;
  /** Signals sent to command jobs' process groups, by name. */
  signals: { SIGINT: number; SIGTERM: number; SIGKILL: number };
}

const COMMAND = fileURLToPath(new URL("./job-command.mjs", import.meta.url));
const LEVEL_SIGNAL = ["SIGINT", "SIGTERM", "SIGKILL"] as const;
/** Startup of a child Node process on a loaded machine can take seconds; this bounds it separately. */
const STARTUP_MS = 20_000;

/** Runs the demo's jobs under @x/process-guard, the same guards for every job of a kind of runner. */
export class JobRunner {
  readonly actions: GuardActions = { aborts: 0, signals: { SIGINT: 0, SIGTERM: 0, SIGKILL: 0 } };
  /** In-process jobs: a cooperative abort at the deadline, nothing else (no signals to our own process). */
  readonly #inline: TimeGuard;
  /** Command jobs, from spawn until the child says "ready". */
  readonly #startup: TimeGuard;
  /** Command jobs, from "ready": SIGINT at the timeout, SIGTERM one grace period later, then SIGKILL. */
  readonly #running: TimeGuard;
  /**
   * Command jobs: the child's RSS; SIGINT at the first sample over the limit. (The job commands start no
   * processes of their own; for commands that do, `metric: "tree"` adds the descendants, at the cost of
   * reading every process's /proc entry at each sample.)
   */
  readonly #memory: MemGuard;

  constructor(limits: JobLimits) {
    const { timeoutMs, graceMs, maxMemoryBytes, logger } = limits;
    const checkIntervalMs = 50;
    const signalLadder = { interruptType: InterruptType.signal, sendKill: true, checkIntervalMs, logger };
    this.#inline = timeGuard({ timeoutMs, interruptType: InterruptType.exception, checkIntervalMs, logger });
    this.#startup = timeGuard({ timeoutMs: STARTUP_MS, gracePeriodMs: graceMs, ...signalLadder });
    this.#running = timeGuard({ timeoutMs, gracePeriodMs: graceMs, ...signalLadder });
    this.#memory = memGuard({
      maxMemoryBytes,
      metric: "rss",
      gracePeriodMs: 0,
      secondaryGracePeriodMs: graceMs,
      ...signalLadder,
    });
    this.#inline.on("interrupt", ({ level }) => {
      if (level === 0) this.actions.aborts++;
    });
    for (const guard of [this.#startup, this.#running, this.#memory]) {
      guard.on("interrupt", ({ level }) => {
        this.actions.signals[LEVEL_SIGNAL[level]]++;
      });
    }
  }

  /** Runs one job and resolves to its exit code; `signal` (the worker stopping) ends it early. */
  async run(job: JobSpec, signal: AbortSignal): Promise<number> {
    if (job.runner === "inline") return this.#runInline(job, signal);
    return this.#runCommand(job, signal);
  }

  async #runInline(job: JobSpec, signal: AbortSignal): Promise<number> {
    try {
      return await this.#inline.run(({ signal: jobSignal }) => inlineWork(job, jobSignal), { signal });
    } catch (error) {
      if (error instanceof ExecutionTimeout) return 124;
      if (signal.aborted) return 130; // the worker is stopping; no DONE is sent for this job
      throw error;
    }
  }

  async #runCommand(job: JobSpec, signal: AbortSignal): Promise<number> {
    const child = spawn(process.execPath, [COMMAND, job.kind, String(job.n)], {
      detached: true,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const failedToStart = new Promise<number>((resolve) =>
      child.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ENOENT" ? 127 : 126)),
    );
    const pid = child.pid;
    if (pid === undefined) return failedToStart;
    const memory = this.#memory.watch(child);
    const startup = this.#startup.watch(child);
    let running: TimeWatchHandle | undefined;
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      if (running === undefined && text.includes("ready")) {
        running = this.#running.watch(child);
        void startup.close();
      }
    });
    const kill = () => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    signal.addEventListener("abort", kill, { once: true });
    try {
      const [memoryResult, startupResult] = await Promise.all([memory, startup]);
      const runningResult = running === undefined ? undefined : await running;
      if (memoryResult.error) return 125;
      if (startupResult.error || runningResult?.error) return 124;
      const { code, signal: exitSignal } = memoryResult;
      if (code !== null) return code;
      return 128 + (exitSignal === null ? 0 : (constants.signals[exitSignal as NodeJS.Signals] ?? 0));
    } finally {
      signal.removeEventListener("abort", kill);
    }
  }
}

/** The in-process jobs: a little asynchronous work that honours the guard's AbortSignal. */
async function inlineWork(job: JobSpec, signal: AbortSignal): Promise<number> {
  switch (job.kind) {
    case "ok":
      await sleep(job.n % 3, { signal });
      createHash("sha256").update(`${job.attrPath} ${job.n}`).digest("hex");
      return 0;
    case "fail":
      await sleep(1, { signal });
      return 1;
    case "stall":
      await sleep(3_600_000, { signal });
      return 0;
    default:
      return 2;
  }
}
