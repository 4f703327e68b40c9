import { type ChildProcess, spawn } from "node:child_process";
import type { Logger } from "@x/core";
import { startTimeOf } from "./process-info.js";

/**
 * The reaper's program, for `/bin/sh` (builtins only: no further process). Arguments: the job's process group
 * id (the leader's pid, which also names its session: the job was started with `setsid`) and the leader's start
 * time (`/proc/<pid>/stat` field 22; empty without `/proc`). It waits on its stdin, a pipe from the guard:
 *
 * - a line `done`: the job ended under the guard's eyes; exit;
 * - end of file without it: the guard died (the kernel closed the pipe, whatever killed the guard). SIGKILL to
 *   the job's group, but only when it still is the job's: the leader is alive (or a zombie) with the same
 *   start time, or, the leader gone, a member of the group is in the job's session. Without `/proc`: when the
 *   group exists.
 *
 * It ignores the signals that reach a whole terminal session or pipeline (it runs in a session of its own
 * anyway), so that what ends the guard does not end it; SIGTERM and SIGKILL still do.
 */
const program = `trap '' HUP INT QUIT PIPE ALRM USR1 USR2
g=$1 t=$2
if read -r word && [ "$word" = done ]; then exit 0; fi
ours() {
  [ -d /proc/self ] || { kill -0 -- "-$g"; return; }
  if read -r s 2>/dev/null </proc/$g/stat; then set -- \${s##*") "}; [ "\${20}" = "$t" ]; return; fi
  for f in /proc/[0-9]*/stat; do
    read -r s 2>/dev/null <"$f" || continue
    set -- \${s##*") "}
    [ "$3" = "$g" ] && [ "$4" = "$g" ] && return 0
  done
  return 1
}
ours 2>/dev/null && kill -s KILL -- "-$g" 2>/dev/null
exit 0`;

/** The name the reaper runs under (its `$0`, visible in `ps`): `x-guard-reaper <pgid> <start time>`. */
export const reaperName = "x-guard-reaper";

/** A running reaper for one job. */
export interface Reaper {
  /** The reaper's pid (`undefined` if it could not be started). */
  readonly pid: number | undefined;
  /** The job has ended under the guard: tell the reaper to leave, without touching the group. Idempotent. */
  disarm(): void;
}

/**
 * Starts a reaper for the process group `pgid`, led by the job the guard just spawned (call it before
 * returning to the event loop: until the guard has reaped the leader, its pid and start time name it). When the
 * guard dies by any means, SIGKILL included, the kernel closes the guard's end of the reaper's stdin, and the
 * reaper kills the group. It runs in a session of its own (`detached`), with no stdout or stderr (it must not
 * hold a pipe that a reader of the guard's output waits on), and never keeps the guard's event loop alive.
 *
 * @param pgid - the job's process group (the pid of its leader, started with `detached: true`)
 * @param startTime - the leader's start time (see `startTimeOf`); default: read now
 * @param logger - where a failure to start the reaper is reported (the job runs on without it)
 */
export function startReaper(pgid: number, logger: Logger, startTime = startTimeOf(pgid) ?? ""): Reaper {
  const cannot = (error: unknown) =>
    logger.warn({ err: error, pgid }, "cannot start the reaper: the job is unguarded if this process dies");
  let child: ChildProcess;
  try {
    child = spawnReaper(pgid, startTime);
  } catch (error) {
    cannot(error);
    return { pid: undefined, disarm() {} };
  }
  child.on("error", cannot);
  const stdin = child.stdin!;
  stdin.on("error", () => {}); // EPIPE: the reaper is gone already (killed by someone, or never started)
  child.unref();
  (stdin as unknown as { unref?: () => void }).unref?.();
  let armed = true;
  return {
    pid: child.pid,
    disarm() {
      if (!armed) return;
      armed = false;
      stdin.end("done\n");
    },
  };
}

/**
 * Spawns the reaper's shell for `pgid` (see {@link startReaper}); its stdin is the pipe: `done\n` disarms it,
 * an end of file without it fires it.
 */
export function spawnReaper(pgid: number, startTime: string): ChildProcess {
  return spawn("/bin/sh", ["-c", program, reaperName, String(pgid), startTime], {
    detached: true,
    cwd: "/", // it must not keep the guard's working directory busy (a temporary one, a mount)
    stdio: ["pipe", "ignore", "ignore"],
  });
}
