import { ExitCode, infoFlagOptions, infoFlagsHelp, parseCommandLine, UsageError } from "@x/core/internal";
import { cli } from "./cli-program.js";

export const queueHtmlUsage = `Usage: x-supervisor queue-html <db> <out.html>

Writes a static HTML page of the queue, to serve in place of the one the original's update_queue.py makes:
the cycle time per fetcher and every waiting entry in dispatch order (position, attribute path, fetcher,
payload, waiting since), where update_queue.py lists number, attribute path and payload only. Reads <db>
read-only (safe while the daemon runs); <out.html> is replaced atomically. Run it from a timer and serve the
file with any web server.

Options:
${infoFlagsHelp(16)}

Exit codes: 0 when written, 1 when the database cannot be read (or is not at schema version 2) or the file
cannot be written, 64 on a usage error.
`;

/** `x-supervisor queue-html`: resolves to the exit code. */
export async function queueHtmlCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: infoFlagOptions,
  });
  const answered = cli.answer(values, queueHtmlUsage);
  if (answered !== undefined) return answered;
  if (positionals.length !== 2) throw new UsageError("queue-html takes two arguments: <db> <out.html>");
  const [db, out] = positionals as [string, string];
  const { writeQueueHtml } = await import("./queue-html.js"); // SQLite, only once the arguments are right
  try {
    const entries = writeQueueHtml(db, out);
    process.stderr.write(`x-supervisor queue-html: ${entries} entries written to ${out}\n`);
    return ExitCode.OK;
  } catch (error) {
    process.stderr.write(
      `x-supervisor queue-html: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return ExitCode.FAILURE;
  }
}
