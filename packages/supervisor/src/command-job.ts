import { type ChildProcess, spawn } from "node:child_process";
import { constants as osConstants } from "node:os";
import { type Logger, silentLogger } from "@x/core";
import { InterruptType, memGuard, timeGuard, type WatchHandle } from "@x/process-guard";
import type { Job } from "./storage.js";

/** Exit code reported when the time limit stopped a command (as `timeout(1)` and the original's workers). */
export const timeoutExitCode = 124;
/** Exit code reported when the memory limit stopped a command. */
export const memoryExitCode = 125;

/** How {@link runCommandJob} runs a job's command. */
export interface CommandJobOptions {
  /** The program, found through `PATH`. */
  command: string;
  /** Its first arguments; the attr path and the payload's fields follow them. */
  args: readonly string[];
  /** Time limit, in seconds; none when absent. */
  timeoutSeconds?: number;
  /** Memory limit of the command's process tree, in KiB; none when absent. */
  maxMemoryKiB?: number;
  /** Wait between escalation steps after a stop (SIGTERM, then SIGINT/SIGTERM/SIGKILL), in seconds. Default 15. */
  stopGraceSeconds?: number;
  /** Where failures to start the command are reported. Default: silent. */
  logger?: Logger;
  /** Called with the command's pid (also its process group id) once it is spawned. */
  onSpawn?: (pid: number) => void;
}

/**
 * Runs `<command> [args…] <attrPath> <field>…` for one job (the payload split at spaces, empty fields dropped),
 * in its own process group with inherited stdio, under `@x/process-guard` limits. The environment also
 * carries `X_SUPERVISOR_ATTR_PATH` and `X_SUPERVISOR_PAYLOAD`.
 *
 * When `signal` aborts, the group gets SIGTERM, then the guard's escalation every `stopGraceSeconds`.
 *
 * @returns the exit status to report: the command's own; 124 when the time limit stopped it; 125 when the
 *   memory limit did; 128+n when signal n killed it; 126 when it cannot be executed; 127 when it is not found
 */
export async function runCommandJob(
  job: Job,
  options: CommandJobOptions,
  signal?: AbortSignal,
): Promise<number> {
  const logger = options.logger ?? silentLogger;
  const fields = job.payload.split(" ").filter((field) => field !== "");
  const child = spawn(options.command, [...options.args, job.attrPath, ...fields], {
    stdio: "inherit",
    detached: true,
    env: { ...process.env, X_SUPERVISOR_ATTR_PATH: job.attrPath, X_SUPERVISOR_PAYLOAD: job.payload },
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null } | NodeJS.ErrnoException>(
    (resolve) => {
      child.once("error", (error) => resolve(error));
      child.once("exit", (code, exitSignal) => resolve({ code, signal: exitSignal }));
    },
  );
  let firstLimit: "time" | "memory" | undefined;
  const handles: Array<WatchHandle> = [];
  if (child.pid !== undefined) {
    options.onSpawn?.(child.pid);
    // The ladder goes to the whole group: SIGINT, then SIGTERM, then SIGKILL (a job must end eventually).
    const ladder = { interruptType: InterruptType.signal, sendKill: true, checkInterval: 100 } as const;
    const guards = [
      options.timeoutSeconds === undefined
        ? undefined
        : { limit: "time" as const, guard: timeGuard({ timeout: options.timeoutSeconds, ...ladder }) },
      options.maxMemoryKiB === undefined
        ? undefined
        : {
            limit: "memory" as const,
            guard: memGuard({ maxMemory: options.maxMemoryKiB, metric: "tree", ...ladder }),
          },
    ];
    for (const entry of guards) {
      if (entry === undefined) continue;
      entry.guard.on("interrupt", () => {
        firstLimit ??= entry.limit;
      });
      handles.push(entry.guard.watch(child));
    }
  }
  const stop = () => stopChild(child, options.stopGraceSeconds ?? 15, handles);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const result = await exited;
    if (result instanceof Error) {
      logger.error({ err: result, command: options.command }, "cannot run the job's command");
      return result.code === "ENOENT" ? 127 : 126;
    }
    await Promise.allSettled(handles);
    if (firstLimit === "time") {
      process.stderr.write(`job ${job.attrPath} was interrupted because it was taking too long\n`);
      return timeoutExitCode;
    }
    if (firstLimit === "memory") return memoryExitCode;
    if (result.signal !== null) return 128 + (osConstants.signals[result.signal] ?? 0);
    return result.code ?? 1;
  } finally {
    signal?.removeEventListener("abort", stop);
    await Promise.allSettled(handles.map((handle) => handle.close()));
  }
}

/** SIGTERM to the command's group now, then process-guard's ladder (SIGINT, SIGTERM, SIGKILL) after `grace` s. */
function stopChild(child: ChildProcess, graceSeconds: number, handles: WatchHandle[]): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  const escalation = timeGuard({
    timeout: graceSeconds,
    gracePeriod: graceSeconds,
    interruptType: InterruptType.signal,
    sendKill: true,
    checkInterval: 100,
  });
  handles.push(escalation.watch(child));
}

/** Sends SIGKILL to the command's process group (the worker's second signal). */
export function killCommandGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}
