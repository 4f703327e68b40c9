// `pnpm pictures`: draws the docs' pictures as SVG into docs/pictures/, each from data: the architecture from
// its description (scripts/pictures/architecture.mjs), the benchmark plots from the figures recorded in
// docs/benchmarks/*.md, and process-guard's escalation ladder from a real run (built packages needed).
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { architecture } from "./pictures/architecture.mjs";
import { benchmarkPictures } from "./pictures/benchmarks.mjs";
import { diagram } from "./pictures/diagram.mjs";
import { timeline } from "./pictures/timeline.mjs";

const root = resolve(import.meta.dirname, "..");
const out = join(root, "docs", "pictures");

/** Writes one picture and says so. */
function save(name, svg) {
  writeFileSync(join(out, name), svg);
  console.log(`docs/pictures/${name}`);
}

save("architecture.svg", diagram(architecture));
for (const [name, svg] of benchmarkPictures(join(root, "docs", "benchmarks"))) save(name, svg);

const { runLadder } = await import("./pictures/ladder-run.mjs");
const { timeoutMs, gracePeriodMs, events } = await runLadder();
save(
  "process-guard-ladder.svg",
  timeline({
    title: "process-guard: the escalation ladder of one real run",
    subtitle: [
      `timeGuard({ timeoutMs: ${timeoutMs}, gracePeriodMs: ${gracePeriodMs}, interruptType: "signal", sendKill: true }).watch(child)`,
      "on a child that ignores SIGINT and SIGTERM; each step as the guard's events and the child reported it",
    ],
    phases: [
      { fromMs: 0, toMs: timeoutMs, label: "running" },
      { fromMs: timeoutMs, toMs: timeoutMs + gracePeriodMs, label: "grace" },
      { fromMs: timeoutMs + gracePeriodMs, toMs: timeoutMs + 2 * gracePeriodMs, label: "grace" },
    ],
    events,
  }),
);
