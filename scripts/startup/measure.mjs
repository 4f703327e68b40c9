// Startup measurement shared by `pnpm bench:startup` and `pnpm check:startup`: runs a command in a fresh
// process, many times, interleaved with the `node -e 0` baseline, and reduces each to medians.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const probe = fileURLToPath(new URL("./probe.cjs", import.meta.url));

/** The repository's root directory. */
export const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The children's CPU time this process has collected so far, in ms (`cutime + cstime` of `/proc/self/stat`, in
 * clock ticks of 10 ms): it counts every waited-for process, the command's own children included. `undefined`
 * without `/proc`.
 */
function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state): cutime and cstime are fields 16 and 17
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Runs `node [nodeArgs…]` once with the probe loaded, its output discarded.
 *
 * @returns wall time (spawn to exit, as the parent sees it), the Node process's own CPU time (user + system, its
 *   threads included, its child processes not) and peak RSS, and its exit status
 */
export function runOnce(nodeArgs, { cwd = root, env = process.env, node = process.execPath } = {}) {
  const started = process.hrtime.bigint();
  const result = spawnSync(node, ["--require", probe, ...nodeArgs], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error) throw result.error;
  const text = result.output[3]?.toString() ?? "";
  if (text === "") {
    throw new Error(
      `node ${nodeArgs.join(" ")}: no usage reported (status ${result.status}, signal ${result.signal}): ${result.stderr}`,
    );
  }
  const usage = JSON.parse(text);
  return {
    wallMs,
    cpuMs: (usage.userUs + usage.systemUs) / 1e3,
    maxRssKb: usage.maxRssKb,
    status: result.status,
    stdout: result.stdout.toString(),
    stderr: result.stderr.toString(),
  };
}

/** The median of `values`. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The `node -e 0` baseline every figure is set against. */
export const baseline = { name: "node -e 0", args: ["-e", "0"] };

/**
 * Measures each case `runs` times, round-robin with the baseline (the order rotating every round, so that
 * neither side always runs first), after one warm-up run of each. A case is `{ name, args, cwd?, env?,
 * status? }`: `args` for `node`, `status` the exit status it must end with (default 0).
 *
 * @returns per case (the baseline first): median wall ms, median CPU ms, median peak RSS KB, the mean CPU ms of
 *   the whole process tree (the Node process and every child it waited for) from `/proc/self/stat`, and every
 *   run's wall ms in round order (`walls`, for {@link pairedRatio})
 */
export function measure(cases, { runs = 20, node } = {}) {
  const all = [baseline, ...cases];
  const samples = all.map(() => ({ wall: [], cpu: [], rss: [], treeCpu: 0 }));
  const once = (item, index, keep) => {
    const before = childrenCpuMs();
    const run = runOnce(item.args, { cwd: item.cwd, env: item.env, node });
    const after = childrenCpuMs();
    const expected = item.status ?? 0;
    if (run.status !== expected) {
      throw new Error(`${item.name}: exit status ${run.status}, expected ${expected}\n${run.stderr}`);
    }
    if (!keep) return;
    const sample = samples[index];
    sample.wall.push(run.wallMs);
    sample.cpu.push(run.cpuMs);
    sample.rss.push(run.maxRssKb);
    sample.treeCpu = before === undefined ? undefined : sample.treeCpu + (after - before);
  };
  for (const [index, item] of all.entries()) once(item, index, false);
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < all.length; k++) {
      const index = (k + round) % all.length;
      once(all[index], index, true);
    }
  }
  return all.map((item, index) => {
    const sample = samples[index];
    return {
      name: item.name,
      wallMs: median(sample.wall),
      cpuMs: median(sample.cpu),
      maxRssKb: median(sample.rss),
      treeCpuMs: sample.treeCpu === undefined ? undefined : sample.treeCpu / runs,
      walls: sample.wall,
      runs,
    };
  });
}

/**
 * The median over rounds of `a`'s wall time divided by `b`'s in the same round, for two results of one
 * {@link measure}: each round's two runs saw the same load, so a ratio of two commands that both spawn
 * processes holds far better on a busy machine than the ratio of their medians.
 */
export function pairedRatio(a, b) {
  return median(a.walls.map((wall, round) => wall / b.walls[round]));
}

/**
 * The issue's targets: a command's median wall and CPU time against `node -e 0`'s, and an import's time; and
 * what `pnpm check:startup` holds `x-guard 10 true` to, against the floor of any Node command guard with a
 * reaper ({@link reaperFloor}): 1.25×, which is 1.5× of `node -e 0` where the floor takes 1.2× of it (it takes
 * 1.15–1.33× on a 2-core machine).
 */
export const targets = { wallRatio: 1.5, cpuRatio: 2, importMs: 30, floorRatio: 1.25 };

/** The file of a package's one command, as its `package.json` names it (`packages/<pkg>/dist/…`). */
const bin = (pkg) => {
  const { bin: bins } = JSON.parse(
    readFileSync(new URL(`../../packages/${pkg}/package.json`, import.meta.url), "utf8"),
  );
  return `packages/${pkg}/${Object.values(bins)[0].replace(/^\.\//, "")}`;
};

/**
 * The command lines every CLI is measured with: the answers that load almost nothing (`--help`, `--version`)
 * and `x-guard` running a command (`true`) under a time limit, as the deployments it is made for run it. A case
 * with `againstFloor` spawns processes: `pnpm check:startup` holds it to the floor (see {@link targets}).
 */
export const cliCases = [
  { name: "x-guard --version", args: [bin("process-guard"), "--version"] },
  { name: "x-guard --help", args: [bin("process-guard"), "--help"] },
  { name: "x-guard 10 true", args: [bin("process-guard"), "10", "true"], againstFloor: true },
  { name: "x-supervisor --help", args: [bin("supervisor"), "--help"] },
  { name: "x-supervisor --version", args: [bin("supervisor"), "--version"] },
  { name: "x-rmq-storage --help", args: [bin("rmq-storage"), "--help"] },
  { name: "x-rmq-storage --version", args: [bin("rmq-storage"), "--version"] },
];

/** A Node script that spawns `true` as x-guard spawns its command (own group, inherited stdio) and exits with it. */
const spawnTrue = `spawn("true", [], { stdio: "inherit", detached: true }).on("exit", (code) => process.exit(code));`;
const withSpawn = (body) => `const { spawn } = process.getBuiltinModule("node:child_process"); ${body}`;

/**
 * What `x-guard 10 true` cannot go below: a minimal Node script that spawns the command and waits for it, with
 * a `/bin/sh` started beside it with a pipe on its stdin, as x-guard's reaper is (its own session, no output,
 * unreferenced). The distance from it to `x-guard 10 true` is x-guard's own code.
 */
export const reaperFloor = {
  name: "floor: node spawns true and a /bin/sh reaper",
  args: [
    "-e",
    withSpawn(
      `const reaper = spawn("/bin/sh", ["-c", "read line; exit 0"], { detached: true, cwd: "/", stdio: ["pipe", "ignore", "ignore"] }); reaper.unref(); reaper.stdin.unref?.(); ${spawnTrue}`,
    ),
  ],
};

/** `pnpm bench:startup --only=floor`: the command alone, {@link reaperFloor}, and `x-guard 10 true`. */
export const floorCases = [
  { name: "floor: node spawns true", args: ["-e", withSpawn(spawnTrue)] },
  reaperFloor,
  { name: "x-guard 10 true", args: [bin("process-guard"), "10", "true"] },
];

const round = (value, digits = 1) => (value === undefined ? undefined : Number(value.toFixed(digits)));

/** One JSON-ready line per case of {@link measure}'s result, each against the baseline's medians. */
export function cliLines(results) {
  const [base, ...rest] = results;
  return rest.map((r) => {
    const wallRatio = r.wallMs / base.wallMs;
    const cpuRatio = r.cpuMs / base.cpuMs;
    return {
      name: r.name,
      value: round(r.wallMs),
      unit: "ms wall (median)",
      cpuMs: round(r.cpuMs),
      maxRssMb: round(r.maxRssKb / 1024),
      treeCpuMs: round(r.treeCpuMs),
      baseline: base.name,
      baselineWallMs: round(base.wallMs),
      baselineCpuMs: round(base.cpuMs),
      baselineMaxRssMb: round(base.maxRssKb / 1024),
      wallRatio: round(wallRatio, 2),
      cpuRatio: round(cpuRatio, 2),
      target: `wall ≤ ${targets.wallRatio}× and CPU ≤ ${targets.cpuRatio}× the baseline's`,
      targetMet: wallRatio <= targets.wallRatio && cpuRatio <= targets.cpuRatio,
      runs: r.runs,
    };
  });
}
