// Runs the whole vitest suite with its usual output, then prints the totals as one plain line,
// "N passed, M failed", read from vitest's JSON reporter. Exits with vitest's exit code.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";

// Absolute: vitest resolves a relative path against the configuration's root, which a `--config` may move.
const output = resolve(".vitest-results.json");
rmSync(output, { force: true });
const run = spawnSync(
  "pnpm",
  [
    "exec",
    "vitest",
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${output}`,
    ...process.argv.slice(2),
  ],
  { stdio: "inherit" },
);

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const results = JSON.parse(readFileSync(output, "utf8"));
  passed = results.numPassedTests;
  failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
  skipped = results.numPendingTests + results.numTodoTests;
} catch {
  failed = 1;
}
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code);
