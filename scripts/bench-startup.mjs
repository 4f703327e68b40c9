// `pnpm bench:startup`: how fast each CLI starts and each package's main entry imports, beside `node -e 0`
// measured in the same run. Prints one JSON line per figure (the packages' bench convention). Needs `pnpm build`.
//
// - One line per CLI command (scripts/startup/measure.mjs: `cliCases`): median wall time (spawn to exit, as
//   the parent sees it), median CPU time of the Node process (user + system, its threads included), median
//   peak RSS, and the mean CPU time of the whole process tree (`treeCpuMs`: the command's children too, from
//   `/proc/self/stat`), each run interleaved with a `node -e 0` run; ratios to the baseline and `targetMet`
//   (wall ≤ 1.5×, CPU ≤ 2×).
// - One line per package: the median time of `await import("<package>")` in a fresh process (the OS file
//   cache warm), against 30 ms.
//
// The CLIs run as users run them: with the module compile cache they turn on, warmed by a first run of each.
// Options: `--runs=N` (default 20; `--quick`: 7), `--only=cli` or `--only=import`, `--only=floor` (not in the
// default set: what `x-guard 10 true` cannot go below, see `floorCases`), `--no-compile-cache` (every
// process under NODE_DISABLE_COMPILE_CACHE=1: what the cache saves).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cliCases, cliLines, floorCases, measure, median, root, targets } from "./startup/measure.mjs";

const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes("--quick");
const runs = Number(option("runs") ?? (quick ? 7 : 20));
const only = option("only");
const noCache = process.argv.includes("--no-compile-cache");
const env = noCache ? { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1" } : process.env;
const extra = noCache ? { compileCache: false } : {};

if (only === undefined || only === "cli") {
  const results = measure(
    cliCases.map((item) => ({ ...item, env })),
    { runs },
  );
  for (const line of cliLines(results)) console.log(JSON.stringify({ ...line, ...extra }));
}
if (only === "floor") {
  const results = measure(
    floorCases.map((item) => ({ ...item, env })),
    { runs },
  );
  for (const line of cliLines(results)) console.log(JSON.stringify({ ...line, ...extra }));
}
if (only === undefined || only === "import") {
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const cwd = join(root, "packages", dir);
    const { name } = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8"));
    console.log(JSON.stringify({ ...importLine(name, cwd), ...extra }));
  }
}

/** The median time of `import(name)` in a fresh Node process started in the package's directory. */
function importLine(name, cwd) {
  const script = `const t = performance.now(); await import(${JSON.stringify(name)}); process.stdout.write(String(performance.now() - t));`;
  const times = [];
  for (let i = 0; i <= runs; i++) {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd,
      env,
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(`import(${name}) failed: ${result.stderr}`);
    if (i > 0) times.push(Number(result.stdout)); // the first run warms the file cache
  }
  const value = median(times);
  return {
    name: `import("${name}")`,
    value: Number(value.toFixed(1)),
    unit: "ms (median, a fresh process each time)",
    target: `≤ ${targets.importMs} ms`,
    targetMet: value <= targets.importMs,
    runs,
  };
}
