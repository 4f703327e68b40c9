const { execFile } = process.getBuiltinModule("node:child_process");
const { closeSync, openSync, readSync } = process.getBuiltinModule("node:fs");

/**
 * Facts about processes: pgid, RSS, descendants, liveness. On Linux they come from `/proc` (synchronous
 * reads of in-memory files, a few µs each); elsewhere from `ps` and `pidusage` (asynchronous).
 * Every function takes `procfs` so tests can force the portable path on Linux.
 */

/** Whether `/proc` is used. */
export const hasProcfs = process.platform === "linux";

/**
 * Whether `/proc` shows this process's own PID namespace: `/proc/self` names our pid. In a PID namespace that
 * kept the host's `/proc` (`unshare --pid --fork` without `--mount-proc`) it names another number, and every
 * `/proc/<pid>` read would be about some other process. `true` without `/proc` (nothing is read there).
 */
export function procfsShowsOurPids(procfs = hasProcfs): boolean {
  if (!procfs) return true;
  try {
    return process.getBuiltinModule("node:fs").readlinkSync("/proc/self") === String(process.pid);
  } catch {
    return false;
  }
}

let statmFd: number | null | undefined;
const statmBuffer = Buffer.alloc(128);

/**
 * Our own RSS, in bytes. On Linux one `pread` of `/proc/self/statm` on a descriptor kept open (a few µs;
 * `process.memoryUsage.rss()` reads the larger `/proc/self/stat`); elsewhere `process.memoryUsage.rss()`.
 */
export function ownRss(): number {
  if (hasProcfs && statmFd !== null) {
    try {
      statmFd ??= openSync("/proc/self/statm", "r");
      const bytes = readSync(statmFd, statmBuffer, 0, statmBuffer.length, 0);
      // the second field: resident pages
      let i = statmBuffer.indexOf(32) + 1;
      let pages = 0;
      for (; i < bytes; i++) {
        const digit = statmBuffer[i]! - 48;
        if (digit < 0 || digit > 9) break;
        pages = pages * 10 + digit;
      }
      return pages * pageSize();
    } catch {
      statmFd = null; // fall back for good
    }
  }
  return process.memoryUsage.rss();
}

/** Thrown (or rejected) when a process does not exist any more. */
export class ProcessGone extends Error {
  constructor(readonly pid: number) {
    super(`process ${pid} is gone`);
  }
}

/** The fields of `/proc/<pid>/stat` the guards need. */
export interface ProcStat {
  state: string;
  ppid: number;
  pgid: number;
  /** The session id. */
  session: number;
  /** Resident pages. */
  rss: number;
  /** When it started, in clock ticks since boot (as written: it may exceed 2^53 in theory). */
  startTime: string;
}

/** Parses `/proc/<pid>/stat`; the command name may contain spaces and parentheses, so split after the last `)`. */
function parseStat(text: string): ProcStat {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state) of proc(5); ppid is field 4, pgrp 5, session 6, starttime 22, rss 24.
  return {
    state: fields[0] ?? "",
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    session: Number(fields[3]),
    rss: Number(fields[21]),
    startTime: fields[19] ?? "",
  };
}

const procBuffer = Buffer.alloc(4096);

/**
 * Reads a whole `/proc` file from an open descriptor, from offset 0 (so that a descriptor kept open reads it
 * afresh each time), into a shared buffer: one read for a small file, more for a longer one (the children of a
 * busy parent).
 */
export function readProcFd(fd: number): string {
  let bytes = readSync(fd, procBuffer, 0, procBuffer.length, 0);
  let text = procBuffer.toString("latin1", 0, bytes);
  for (let position = bytes; bytes === procBuffer.length; position += bytes) {
    bytes = readSync(fd, procBuffer, 0, procBuffer.length, position);
    text += procBuffer.toString("latin1", 0, bytes);
  }
  return text;
}

/**
 * Reads a small `/proc` file with one open, one read and one close (`readFileSync` needs five system calls
 * on files whose size `/proc` reports as 0).
 */
function readProcFile(path: string): string {
  const fd = openSync(path, "r");
  try {
    return readProcFd(fd);
  } finally {
    closeSync(fd);
  }
}

/** `/proc/<pid>/stat`, parsed; throws `ProcessGone` when the process is gone. */
export function readProcStat(pid: number | "self"): ProcStat {
  try {
    return parseStat(readProcFile(`/proc/${pid}/stat`));
  } catch (error) {
    if (isCode(error, "ENOENT") || isCode(error, "ESRCH")) throw new ProcessGone(Number(pid));
    throw error;
  }
}

/** Whether `error` is a Node system error with this `code`. */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

let pageBytes: number | undefined;

/** The page size, in bytes: `/proc/self/statm`'s resident pages against `process.memoryUsage.rss()`. */
export function pageSize(): number {
  if (pageBytes === undefined) {
    const pages = Number(readProcFile("/proc/self/statm").split(" ")[1]);
    const ratio = process.memoryUsage.rss() / pages;
    pageBytes = 2 ** Math.round(Math.log2(ratio)); // the two reads differ by a few pages at most
  }
  return pageBytes;
}

/** Runs `ps` with `args`; its output. */
export function ps(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("ps", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      // ps exits 1 when -p matches nothing; the empty output says the same
      if (error && stdout.trim() === "") reject(error);
      else resolve(stdout);
    });
  });
}

/** The process group of `pid`, or a `ProcessGone`. */
export function pgidOf(pid: number, procfs = hasProcfs): number | Promise<number> {
  if (procfs) return readProcStat(pid).pgid;
  return ps(["-o", "pgid=", "-p", String(pid)]).then(
    (out) => {
      const pgid = Number.parseInt(out.trim(), 10);
      if (!Number.isInteger(pgid)) throw new ProcessGone(pid);
      return pgid;
    },
    () => {
      throw new ProcessGone(pid);
    },
  );
}

/**
 * When `pid` started (`/proc/<pid>/stat`'s `starttime`, clock ticks since boot): with the pid, it names one
 * process for good, since a pid is reused only by a later process. `undefined` without `/proc` or when the
 * process is gone (a zombie still has it).
 */
export function startTimeOf(pid: number, procfs = hasProcfs): string | undefined {
  if (!procfs) return undefined;
  try {
    return readProcStat(pid).startTime;
  } catch {
    return undefined;
  }
}

/** Our own session id, from `/proc` (Linux); `undefined` elsewhere or when `/proc` is not ours. */
export function ownSession(procfs = hasProcfs): number | undefined {
  if (!procfs || !procfsShowsOurPids(procfs)) return undefined;
  try {
    return readProcStat(process.pid).session;
  } catch {
    return undefined;
  }
}

let ownGroup: number | Promise<number> | undefined;

/** Our own process group (cached: a Node process does not change it). */
export function ownPgid(): number | Promise<number> {
  if (ownGroup === undefined) {
    ownGroup = pgidOf(process.pid);
    if (ownGroup instanceof Promise) ownGroup.then((pgid) => (ownGroup = pgid)).catch(() => {});
  }
  return ownGroup;
}

/** The resident pages in the text of a `/proc/<pid>/statm` (its second field). */
export function residentPages(statm: string): number {
  return Number(statm.split(" ")[1]);
}

/** The RSS of `pid`, in bytes: `/proc/<pid>/statm` on Linux, `pidusage` elsewhere. */
export function rssOf(pid: number, procfs = hasProcfs): number | Promise<number> {
  if (procfs) {
    let text: string;
    try {
      text = readProcFile(`/proc/${pid}/statm`);
    } catch (error) {
      if (isCode(error, "ENOENT") || isCode(error, "ESRCH")) throw new ProcessGone(pid);
      throw error;
    }
    return residentPages(text) * pageSize();
  }
  // pidusage keeps a short per-pid history (its default); { maxage: 0 } makes it loop on Linux until EMFILE
  return import("pidusage").then(({ default: pidusage }) =>
    pidusage(pid).then(
      (stat) => stat.memory,
      (error: unknown) => {
        if (isCode(error, "ENOENT") || !isAlive(pid)) throw new ProcessGone(pid);
        throw error;
      },
    ),
  );
}

/**
 * Whether `pid` still runs: `process.kill(pid, 0)` (ESRCH: gone; EPERM: alive, not ours). On Linux a zombie
 * counts as gone.
 */
export function isAlive(pid: number, procfs = hasProcfs): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (isCode(error, "ESRCH")) return false;
  }
  if (procfs) {
    try {
      return readProcStat(pid).state !== "Z";
    } catch {
      return false;
    }
  }
  return true;
}
