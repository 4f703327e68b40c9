/** How a job runs: inside the worker's process, or as a child process. */
export type Runner = "inline" | "command";

/** What a job does: succeed, report failure, stall (waits forever, honours its AbortSignal), hang (ignores SIGINT), eat memory. */
export type JobKind = "ok" | "fail" | "stall" | "hang" | "hog";

/** One job of the fetcher file: the attr path and what its payload asks for. */
export interface JobSpec {
  attrPath: string;
  runner: Runner;
  kind: JobKind;
  /** A per-job number that varies the work a little. */
  n: number;
}

/** The outcomes a plan leads to, for the final check. */
export interface Expected {
  ok: number;
  failed: number;
  timedOut: number;
  memory: number;
}

/** The jobs the fetcher writes, and what their outcome must be. */
export interface Plan {
  jobs: JobSpec[];
  expected: Expected;
  /** How many jobs of each `runner kind` pair. */
  mix: Record<string, number>;
}

/** A small seeded PRNG (mulberry32), so every run writes the same file. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The demo's job mix for `total` jobs: mostly quick inline successes, about 1 % inline failures, a few
 * inline stalls (stopped by the TimeGuard's abort), command jobs that succeed, hang (need SIGTERM) or eat
 * memory (stopped by the MemGuard), shuffled with a fixed seed.
 */
export function makePlan(total: number): Plan {
  const hang = Math.max(2, Math.round(total * 0.0015));
  const special: Array<[Runner, JobKind, number]> = [
    ["command", "hang", hang],
    ["command", "hog", hang],
    ["command", "ok", 2 * hang],
    ["inline", "stall", Math.max(4, Math.round(total * 0.004))],
    ["inline", "fail", Math.round(total * 0.01)],
  ];
  const kinds: Array<[Runner, JobKind]> = [];
  for (const [runner, kind, count] of special) for (let i = 0; i < count; i++) kinds.push([runner, kind]);
  while (kinds.length < total) kinds.push(["inline", "ok"]);
  const next = random(20_260_422);
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  const width = String(total).length;
  const jobs = kinds.map(([runner, kind], i) => ({
    attrPath: `job-${String(i + 1).padStart(width, "0")}`,
    runner,
    kind,
    n: Math.floor(next() * 1_000),
  }));
  const mix: Record<string, number> = {};
  const expected: Expected = { ok: 0, failed: 0, timedOut: 0, memory: 0 };
  for (const job of jobs) {
    const key = `${job.runner} ${job.kind}`;
    mix[key] = (mix[key] ?? 0) + 1;
    if (job.kind === "ok") expected.ok++;
    else if (job.kind === "fail") expected.failed++;
    else if (job.kind === "hog") expected.memory++;
    else expected.timedOut++;
  }
  return { jobs, expected, mix };
}

/** The fetcher-file line of a job: `<attrPath> <runner> <kind> <n>` (the payload is after the first space). */
export function jobLine(job: JobSpec): string {
  return `${job.attrPath} ${job.runner} ${job.kind} ${job.n}`;
}

const runners = new Set<string>(["inline", "command"]);
const kinds = new Set<string>(["ok", "fail", "stall", "hang", "hog"]);

/** Reads a job back from the supervisor's `JOB <attrPath> <payload>`; `undefined` for a payload the demo did not write. */
export function parseJob(attrPath: string, payload: string): JobSpec | undefined {
  const [runner = "", kind = "", n = ""] = payload.split(" ");
  if (!runners.has(runner) || !kinds.has(kind) || !/^\d+$/.test(n)) return undefined;
  return { attrPath, runner: runner as Runner, kind: kind as JobKind, n: Number(n) };
}
