import { ExitCode, parseCommandLine, UsageError } from "@x/core/internal";
import { writeQueueHtml } from "./queue-html.js";

export const queueHtmlUsage = `Usage: x-supervisor queue-html <db> <out.html>

Writes a static HTML page of the queue, as the original's update_queue.py did: the cycle time per fetcher and
every waiting entry in dispatch order (position, attribute path, fetcher, payload, waiting since). Reads <db>
read-only (safe while the daemon runs); <out.html> is replaced atomically. Run it from a timer and serve the
file with any web server.

Options:
  --help    this help

Exit codes: 0 when written, 1 when the database cannot be read (or is not at schema version 2) or the file
cannot be written, 64 on a usage error.
`;

/** `x-supervisor queue-html`. */
export function queueHtmlCommand(args: string[]): number {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { help: { type: "boolean", default: false } },
  });
  if (values.help) {
    process.stdout.write(queueHtmlUsage);
    return ExitCode.OK;
  }
  if (positionals.length !== 2) throw new UsageError("queue-html takes two arguments: <db> <out.html>");
  const [db, out] = positionals as [string, string];
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
