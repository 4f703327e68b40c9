// Runs the whole vitest suite with its usual output, then prints the totals as one plain line,
// "N passed, M failed", read from vitest's JSON reporter, after a "FAILED file > test: message" line per
// failure, so a log's tail names what broke. Exits with vitest's exit code.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { relative, resolve } from "node:path";

// Absolute: vitest resolves a relative path against the configuration's root, which a `--config` may move.
// One file per run, so that runs side by side (.ci/run's fast tiers beside the system tests) keep their own.
const output = resolve(`.vitest-results-${process.pid}.json`);
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
/** One line per failed test (or failed file), its message cut to its first line. */
const failures = [];
const firstLine = (text) =>
  String(text ?? "")
    .split("\n")[0]
    .slice(0, 300);
try {
  const results = JSON.parse(readFileSync(output, "utf8"));
  for (const file of results.testResults ?? []) {
    const name = relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failedTests)
      failures.push(`FAILED ${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    if (failedTests.length === 0 && file.status === "failed")
      failures.push(`FAILED ${name}: ${firstLine(file.message)}`);
  }
  passed = results.numPassedTests;
  failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
  skipped = results.numPendingTests + results.numTodoTests;
} catch {
  failed = 1;
}
rmSync(output, { force: true });
const code = run.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;
for (const line of failures) console.log(line);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code);
