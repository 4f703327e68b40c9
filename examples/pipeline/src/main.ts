import { createConsoleLogger } from "@x/core";
import { createStatusLine, ExitCode, onShutdownSignals, signalExitCode, UsageError } from "@x/core/internal";
import { HELP, parseConfig } from "./config.js";
import { type LiveState, runPipeline } from "./pipeline.js";
import { checkReport, formatSummary, progressText } from "./summary.js";

/** Runs the demo with `args`; resolves to the exit status. */
async function main(args: string[]): Promise<number> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`pnpm demo: ${error.message}\nRun \`pnpm demo --help\` for the options.\n`);
    return ExitCode.USAGE;
  }
  if (config === "help") {
    process.stdout.write(HELP);
    return ExitCode.OK;
  }

  const logger = createConsoleLogger({ level: config.verbose ? "info" : "warn", name: "demo" });
  const status = createStatusLine();
  const live: LiveState = {
    stage: "starting",
    total: config.jobs,
    ingested: 0,
    outcomes: { ok: 0, failed: 0, timedOut: 0, memory: 0, other: 0 },
    consumed: 0,
    paused: false,
    startedAt: performance.now(),
  };
  const onChange = () => status.update(progressText(live));
  const stop = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const unhook = onShutdownSignals((signal) => {
    stoppedBy = signal;
    stop.abort(new Error(`stopped by ${signal}`));
  });
  const deadline = setTimeout(() => {
    const seconds = Math.round(config.deadlineMs / 1000);
    stop.abort(new Error(`the run did not finish within ${seconds} s (at: ${progressText(live)})`));
  }, config.deadlineMs);
  const redraw = setInterval(onChange, 250);
  try {
    const report = await runPipeline(config, live, { logger, onChange, signal: stop.signal });
    live.stage = "running"; // the last counters stay on the terminal
    status.done(progressText(live));
    process.stdout.write(config.json ? `${JSON.stringify(report)}\n` : formatSummary(report));
    const problems = checkReport(report);
    if (problems.length > 0) {
      process.stderr.write(`pnpm demo: the run finished, but ${problems.length} check(s) failed:\n`);
      for (const problem of problems) process.stderr.write(`  - ${problem}\n`);
      return ExitCode.FAILURE;
    }
    return ExitCode.OK;
  } catch (error) {
    status.done();
    if (stoppedBy !== undefined) return signalExitCode(stoppedBy);
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    process.stderr.write(`pnpm demo failed${typeof code === "string" ? ` (${code})` : ""}: ${message}\n`);
    if (config.amqpUrl !== undefined && /AMQP|RABBIT|CONNECT|ECONNREFUSED/i.test(`${code} ${message}`)) {
      const where = config.amqpUrl.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
      process.stderr.write(`Is RabbitMQ running at ${where}? \`pnpm services\` installs and starts one.\n`);
    }
    if (config.verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return ExitCode.FAILURE;
  } finally {
    clearTimeout(deadline);
    clearInterval(redraw);
    unhook();
  }
}

process.exitCode = await main(process.argv.slice(2));
// Everything is closed by now; if some handle still keeps the process alive, say so and exit anyway.
setTimeout(() => {
  process.stderr.write("pnpm demo: a handle was left open after the run; exiting anyway\n");
  process.exit();
}, 3_000).unref();
