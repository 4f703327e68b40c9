import { readdirSync, readFileSync } from "node:fs";

/** A field of /proc/<pid>/status, in KiB (VmRSS: resident now; VmHWM: the peak). */
export function procStatusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match![1]);
}

/** How many file descriptors process `pid` has open now (the entries of /proc/<pid>/fd). */
export function openDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** This process's soft limit on open file descriptors (`ulimit -n`), from /proc/self/limits. */
export function openFileSoftLimit(): number {
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync("/proc/self/limits", "utf8"));
  return match === null || match[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(match[1]);
}
