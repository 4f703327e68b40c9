// `pnpm check:startup`: fails when a CLI starts slower than the target of issue #31: median wall time ≤ 1.5× and
// median CPU time ≤ 2× those of `node -e 0`, measured in the same run. Needs `pnpm build`.
//
// Made for a small, busy CI machine: every command runs `--runs` times (default 21), each run interleaved with
// a baseline run so that both see the same load, and the medians are compared. A command that misses is
// measured again, with a fresh baseline and twice the runs, before the check fails: it fails only when both
// measurements miss. `--skip=<command>` (repeatable) leaves a command out, e.g. `--skip="x-guard 10 true"`.
//
// `x-guard 10 true` starts two processes, whose spawns swing its wall time on a busy machine by more than the
// distance between the target and what it takes. Its wall time is held to the floor of any Node command guard
// with a reaper, measured in the same rounds: at most 1.25× the floor's, as the median of each round's ratio
// (`targets.floorRatio`, docs/benchmarks/startup.md); its CPU time to the 2× of every command.
import {
  cliCases as allCases,
  cliLines,
  measure,
  pairedRatio,
  reaperFloor,
  targets,
} from "./startup/measure.mjs";

const values = (name) =>
  process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.slice(name.length + 3));
const runs = Number(values("runs")[0] ?? 21);
const skipped = values("skip");
const unknown = skipped.filter((name) => !allCases.some((item) => item.name === name));
if (unknown.length > 0) {
  console.error(`check:startup: no such command: ${unknown.join(", ")}`);
  process.exit(2);
}
const cliCases = allCases.filter((item) => !skipped.includes(item.name));

/**
 * Measures `cases` and judges each. The cases held to the floor are measured on their own, in rounds with the
 * floor and the baseline only, so that each of their runs has a floor run beside it.
 */
function check(cases, rounds) {
  const plain = cases.filter((item) => !item.againstFloor);
  const floored = cases.filter((item) => item.againstFloor);
  const lines = plain.length > 0 ? cliLines(measure(plain, { runs: rounds })) : [];
  if (floored.length === 0) return lines;
  const results = measure([...floored, reaperFloor], { runs: rounds });
  const floor = results.at(-1);
  const flooredLines = cliLines(results.slice(0, -1)).map((line, index) => {
    const floorRatio = pairedRatio(results[index + 1], floor);
    return {
      ...line,
      floorWallMs: Number(floor.wallMs.toFixed(1)),
      floorRatio: Number(floorRatio.toFixed(3)),
      target: `wall ≤ ${targets.floorRatio}× the floor's ("${reaperFloor.name}", median of each round's ratio) and CPU ≤ ${targets.cpuRatio}× the baseline's`,
      targetMet: floorRatio <= targets.floorRatio && line.cpuRatio <= targets.cpuRatio,
    };
  });
  return [...lines, ...flooredLines];
}

const first = check(cliCases, runs);
for (const line of first) console.log(JSON.stringify(line));
let missed = first.filter((line) => !line.targetMet).map((line) => line.name);
if (missed.length > 0) {
  console.log(`check:startup: ${missed.join(", ")} missed the target; measuring again`);
  const again = check(
    cliCases.filter((item) => missed.includes(item.name)),
    runs * 2,
  );
  for (const line of again) console.log(JSON.stringify({ ...line, retry: true }));
  missed = again.filter((line) => !line.targetMet).map((line) => line.name);
}
if (missed.length > 0) {
  console.error(`check:startup: FAILED, slower than the target twice: ${missed.join(", ")}`);
  process.exit(1);
}
console.log(
  `check:startup: ok (${cliCases.length} commands${skipped.length > 0 ? `; skipped: ${skipped.join(", ")}` : ""})`,
);
