import { createCommandLogger, ExitCode, infoFlagsHelp, logFlagsHelp, reportFailure } from "@x/core/internal";
import { parseStatusArgs } from "./cli-args.js";
import { supervisorFailureKind } from "./cli-log.js";
import { cli } from "./cli-program.js";
import type { QueueStatus } from "./status.js";

export const statusUsage = `Usage: x-supervisor status <db> [--json] [--log-level LEVEL] [--log-json]

Prints the queue's figures from a supervisor database, read-only (safe while the daemon runs).

Options:
  --json              one JSON object on stdout instead of a human summary
${logFlagsHelp(22)}
${infoFlagsHelp(22)}

Exit codes: 0 printed, 78 when <db> cannot be opened or is not a supervisor database, 64 on a usage
error. Failures are logged on stderr (one JSON line with --log-json).
`;

function summary(s: QueueStatus): string {
  const oldest = s.oldestWaiting
    ? `${s.oldestWaiting.attrPath} (${s.oldestWaiting.fetcher}, last started ${
        s.oldestWaiting.lastStarted === null ? "never" : new Date(s.oldestWaiting.lastStarted).toISOString()
      })`
    : "none";
  const lines = [
    `queue rows   ${s.rows}`,
    `waiting      ${s.waiting} (eligible now: ${s.eligible})`,
    `in flight    ${s.inFlight} (stale, over 12 h: ${s.stale})`,
    `finished     ${s.finished} (failed: ${s.failed})`,
    `next job     ${oldest}`,
    "",
    ...(s.unfinishedJobs.length === 0
      ? []
      : [
          ["unfinished job", "started", "state", "held by (TLS client certificate)"].join("\t"),
          ...s.unfinishedJobs.map((j) =>
            [
              j.attrPath,
              new Date(j.started).toISOString(),
              j.stale ? "stale" : "in flight",
              j.holder ?? "-",
            ].join("\t"),
          ),
          "",
        ]),
    ["fetcher", "run", "complete", "rows", "pending"].join("\t"),
    ...s.fetcherRuns.map((r) =>
      [r.fetcher, r.runStarted, r.isComplete ? "yes" : "no", r.rows, r.pending].join("\t"),
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/** `x-supervisor status`: resolves to the exit code. */
export async function statusCommand(args: string[]): Promise<number> {
  const line = parseStatusArgs(args);
  const answered = cli.answer(line, statusUsage);
  if (answered !== undefined) return answered;
  const { readQueueStatus } = await import("./status.js"); // SQLite, only once the arguments are right
  let status: QueueStatus;
  try {
    status = readQueueStatus(line.db);
  } catch (error) {
    const logger = createCommandLogger("x-supervisor status", line.log);
    return reportFailure(logger, "cannot read the queue", error, supervisorFailureKind(error));
  }
  process.stdout.write(line.json ? `${JSON.stringify(status)}\n` : summary(status));
  return ExitCode.OK;
}
