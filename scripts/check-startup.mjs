// `pnpm check:startup`: fails when a CLI starts slower than the target of issue #31: median wall time ≤ 1.5× and
// median CPU time ≤ 2× those of `node -e 0`, measured in the same run. Needs `pnpm build`.
//
// Made for a small, busy CI machine: every command runs `--runs` times (default 15), each run interleaved with
// a baseline run so that both see the same load, and the medians are compared. A command that misses is
// measured again, with a fresh baseline and twice the runs, before the check fails: it fails only when both
// measurements miss. `--skip=<command>` (repeatable) leaves a command out, e.g. `--skip="x-guard 10 true"`.
import { cliCases as allCases, cliLines, measure } from "./startup/measure.mjs";

const values = (name) =>
  process.argv.filter((arg) => arg.startsWith(`--${name}=`)).map((arg) => arg.slice(name.length + 3));
const runs = Number(values("runs")[0] ?? 15);
const skipped = values("skip");
const unknown = skipped.filter((name) => !allCases.some((item) => item.name === name));
if (unknown.length > 0) {
  console.error(`check:startup: no such command: ${unknown.join(", ")}`);
  process.exit(2);
}
const cliCases = allCases.filter((item) => !skipped.includes(item.name));

const first = cliLines(measure(cliCases, { runs }));
for (const line of first) console.log(JSON.stringify(line));
let missed = first.filter((line) => !line.targetMet).map((line) => line.name);
if (missed.length > 0) {
  console.log(`check:startup: ${missed.join(", ")} missed the target; measuring again`);
  const again = cliLines(
    measure(
      cliCases.filter((item) => missed.includes(item.name)),
      { runs: runs * 2 },
    ),
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
