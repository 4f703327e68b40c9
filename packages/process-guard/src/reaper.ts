import type { ChildProcess } from "node:child_process";
import type { Logger } from "@x/core";
import { startTimeOf } from "./process-info.js";

const { spawn } = process.getBuiltinModule("node:child_process");

/**
 * The reaper's program, for `/bin/sh` (builtins only: no further process). It is started before the job, and
 * waits on its stdin, a pipe from the guard, for:
 *
 * 1. a line `<pgid> <session> <start time>`: the job's process group id (the leader's pid), its session (the
 *    same number when the job was started with `setsid`, else the guard's own) and the leader's start time
 *    (`/proc/<pid>/stat` field 22; empty without `/proc`), written as soon as the job is spawned; or `done`
 *    (the job did not start): exit;
 * 2. a line `done`: the job ended under the guard's eyes; exit;
 *
 * and at an end of file instead of either, the guard died (the kernel closed the pipe, whatever killed the
 * guard): before 1, exit; after 1, SIGKILL to the job's group, but only when it still is the job's: the leader
 * is alive (or a zombie) with the same start time, or, the leader gone, a member of the group is in the job's
 * session (its own, or the guard's for a job in the guard's session). Without `/proc`: when the group exists.
 *
 * It ignores the signals that reach a whole terminal session or pipeline (it runs in a session of its own
 * anyway), so that what ends the guard does not end it; SIGTERM and SIGKILL still do.
 */
const program = `trap '' HUP INT QUIT PIPE ALRM USR1 USR2
read -r g e t || exit 0
[ "$g" = done ] && exit 0
if read -r word && [ "$word" = done ]; then exit 0; fi
ours() {
  [ -d /proc/self ] || { kill -0 -- "-$g"; return; }
  if read -r s 2>/dev/null </proc/$g/stat; then set -- \${s##*") "}; [ "\${20}" = "$t" ]; return; fi
  for f in /proc/[0-9]*/stat; do
    read -r s 2>/dev/null <"$f" || continue
    set -- \${s##*") "}
    [ "$3" = "$g" ] && [ "$4" = "$e" ] && return 0
  done
  return 1
}
ours 2>/dev/null && kill -s KILL -- "-$g" 2>/dev/null
exit 0`;

/** The name the reaper runs under (its `$0`, visible in `ps` as `sh -c … x-guard-reaper`). */
export const reaperName = "x-guard-reaper";

/** A running reaper for one job. */
export interface Reaper {
  /** The reaper's pid (`undefined` if it could not be started). */
  readonly pid: number | undefined;
  /**
   * Hands the reaper the job's process group, to kill should this process die: call it right after spawning
   * the job, before returning to the event loop (until the guard has reaped the leader, its pid and start time
   * name it).
   *
   * @param pgid - the job's process group (the pid of its leader, started with `detached: true`)
   * @param session - the job's session: default `pgid` (a job started with `setsid`)
   * @param startTime - the leader's start time (see `startTimeOf`); default: read now
   */
  arm(pgid: number, session?: number, startTime?: string): void;
  /** The job has ended under the guard, or did not start: the reaper leaves, without touching anything. Idempotent. */
  disarm(): void;
}

/**
 * Starts a reaper, before the job it will guard (so that nothing separates the job's spawn from its guard but
 * one write to a pipe): {@link Reaper.arm} hands it the job's group. When the guard dies by any means, SIGKILL
 * included, the kernel closes the guard's end of the reaper's stdin, and the reaper kills the group. It runs in
 * a session of its own (`detached`), in `/`, with no stdout or stderr (it must not hold a pipe that a reader of
 * the guard's output waits on), and never keeps the guard's event loop alive.
 *
 * @param logger - where a failure to start the reaper is reported (the job runs on without it)
 */
export function startReaper(logger: Logger): Reaper {
  const cannot = (error: unknown) =>
    logger.warn({ err: error }, "cannot start the reaper: the job is unguarded if this process dies");
  let child: ChildProcess;
  try {
    child = spawnReaper();
  } catch (error) {
    cannot(error);
    return { pid: undefined, arm() {}, disarm() {} };
  }
  child.on("error", cannot);
  const stdin = child.stdin!;
  stdin.on("error", () => {}); // EPIPE: the reaper is gone already (killed by someone, or never started)
  child.unref();
  (stdin as unknown as { unref?: () => void }).unref?.();
  let state: "waiting" | "armed" | "done" = "waiting";
  return {
    pid: child.pid,
    arm(pgid, session = pgid, startTime = startTimeOf(pgid) ?? "") {
      if (state !== "waiting") return;
      state = "armed";
      stdin.write(`${pgid} ${session} ${startTime}\n`);
    },
    disarm() {
      if (state === "done") return;
      state = "done";
      stdin.end("done\n");
    },
  };
}

/**
 * Spawns the reaper's shell (see {@link startReaper}); its stdin is the pipe: `<pgid> <start time>\n` arms it,
 * `done\n` disarms it, an end of file after arming fires it.
 */
export function spawnReaper(): ChildProcess {
  return spawn("/bin/sh", ["-c", program, reaperName], {
    detached: true,
    cwd: "/", // it must not keep the guard's working directory busy (a temporary one, a mount)
    // its program uses shell builtins only: copying our whole environment (one string per variable) would
    // only slow the start of every command
    env: { PATH: process.env.PATH },
    stdio: ["pipe", "ignore", "ignore"],
  });
}
