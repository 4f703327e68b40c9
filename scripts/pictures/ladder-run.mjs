// A real run of process-guard's escalation ladder, for the timeline picture: a child that ignores SIGINT and
// SIGTERM is watched by a TimeGuard (signals, SIGKILL last); every step is timed from the start.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { InterruptType, timeGuard } from "../../packages/process-guard/dist/index.js";

/**
 * Runs the ladder and returns what happened, in ms since the watch began: `{ timeoutMs, gracePeriodMs,
 * events: [{ atMs, label }] }`.
 */
export async function runLadder({ timeoutMs = 400, gracePeriodMs = 300 } = {}) {
  const child = spawn(
    process.execPath,
    [
      "-e",
      'for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => console.log(s)); console.log("ready"); setInterval(() => {}, 1e3);',
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const events = [];
  let started = 0;
  const at = () => Math.round(performance.now() - started);
  child.stdout.setEncoding("utf8");
  await once(child.stdout, "data");
  child.stdout.on("data", (chunk) => {
    for (const line of chunk.split("\n").filter(Boolean))
      events.push({ atMs: at(), label: `child got ${line}` });
  });
  const guard = timeGuard({ timeoutMs, gracePeriodMs, interruptType: InterruptType.signal, sendKill: true });
  guard.on("interrupt", ({ level, action }) =>
    events.push({ atMs: at(), label: `level ${level}: ${action}` }),
  );
  started = performance.now();
  const result = await guard.watch(child);
  events.push({ atMs: at(), label: `exit: ${result.signal ?? result.code}` });
  return { timeoutMs, gracePeriodMs, events };
}
