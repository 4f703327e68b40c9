import { createCommandLogger, ExitCode, infoFlagsHelp, logFlagsHelp, reportFailure } from "@x/core/internal";
import { parseQueueHtmlArgs } from "./cli-args.js";
import { supervisorFailureKind } from "./cli-log.js";
import { cli } from "./cli-program.js";

export const queueHtmlUsage = `Usage: x-supervisor queue-html <db> <out.html> [--log-level LEVEL] [--log-json]

Writes a static HTML page of the queue, to serve in place of the one the original's update_queue.py makes:
the cycle time per fetcher and every waiting entry in dispatch order (position, attribute path, fetcher,
payload, waiting since), where update_queue.py lists number, attribute path and payload only. Reads <db>
read-only (safe while the daemon runs); <out.html> is replaced atomically. Run it from a timer and serve the
file with any web server.

Options:
${logFlagsHelp(22)}
${infoFlagsHelp(22)}

Exit codes: 0 when written, 78 when the database cannot be read (or is not at schema version 2) or the file
cannot be written there, 1 for any other failure, 64 on a usage error.
`;

/** `x-supervisor queue-html`: resolves to the exit code. */
export async function queueHtmlCommand(args: string[]): Promise<number> {
  const line = parseQueueHtmlArgs(args);
  const answered = cli.answer(line, queueHtmlUsage);
  if (answered !== undefined) return answered;
  const { db, out } = line;
  const { writeQueueHtml } = await import("./queue-html.js"); // SQLite, only once the arguments are right
  const logger = createCommandLogger("x-supervisor queue-html", line.log);
  try {
    const entries = writeQueueHtml(db, out);
    logger.info({ entries, out }, `${entries} entries written to ${out}`);
    return ExitCode.OK;
  } catch (error) {
    return reportFailure(logger, "cannot write the page", error, supervisorFailureKind(error));
  }
}
