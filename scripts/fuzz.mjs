// `pnpm fuzz [--runs N] [vitest filters…]`: every property-based test (`*.fuzz.test.ts`) with a long budget
// (default 20 000 inputs per property; CI runs 300), then a Markdown table of what each parser took, for
// docs/reliability.md.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: "string", default: "20000" } },
});
const dir = mkdtempSync(join(tmpdir(), "x-fuzz-"));
const report = join(dir, "report.jsonl");
const run = spawnSync(
  "pnpm",
  ["exec", "vitest", "run", "--typecheck.enabled=false", "--testTimeout=0", ...positionals, "fuzz."],
  { stdio: "inherit", env: { ...process.env, X_FUZZ_RUNS: values.runs, X_FUZZ_REPORT: report } },
);
let lines = [];
try {
  lines = readFileSync(report, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
} catch {}
rmSync(dir, { recursive: true, force: true });
console.log("\n| parser | inputs | time |\n| --- | ---: | ---: |");
for (const { parser, runs, ms } of lines.sort((a, b) => a.parser.localeCompare(b.parser)))
  console.log(`| ${parser} | ${runs.toLocaleString("en")} | ${(ms / 1000).toFixed(1)} s |`);
console.log(`\n${lines.length} properties, ${run.status === 0 ? "no failure" : "FAILURES above"}`);
process.exitCode = run.status ?? 1;
