import { XError } from "@x/core";
import { asksForJsonLogs, exitQuietlyOnBrokenPipe, infoFlagsHelp, UsageError } from "@x/core/internal";
import { cli } from "./cli-program.js";

const usage = `Usage: x-supervisor <command> [arguments]

Commands:
  serve <db> <fetchers-dir> <socket> [--socket-mode MODE] [--socket-group GROUP] [--max-connections N]
        [--tls HOST:PORT --tls-cert FILE --tls-key FILE --tls-ca FILE] [--http [HOST:]PORT]
                                                      run the queue daemon
  worker <socket> [--timeout DURATION] [--max-memory SIZE] -- <command> [args…]
  worker --connect tls://HOST:PORT --tls-cert FILE --tls-key FILE --tls-ca FILE [options] -- <command> [args…]
                                                      run jobs from the daemon
  status <db> [--json] [--log-json]                   print the queue's figures
  queue-html <db> <out.html> [--log-json]             write a static HTML page of the queue

Options:
${infoFlagsHelp(14)}

Run x-supervisor <command> --help for details.
`;

type Command = (args: string[]) => number | Promise<number>;

// Each command's module is loaded when it runs: `x-supervisor --help` loads none, `status` no socket code,
// `worker` no SQLite.
const commands = {
  serve: async () => (await import("./cli-serve.js")).serveCommand,
  worker: async () => (await import("./cli-worker.js")).workerCommand,
  status: async () => (await import("./cli-status.js")).statusCommand,
  "queue-html": async () => (await import("./cli-queue-html.js")).queueHtmlCommand,
} satisfies Record<string, () => Promise<Command>>;

const isCommand = (name: string | undefined): name is keyof typeof commands =>
  name !== undefined && Object.hasOwn(commands, name);

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (isCommand(command)) return await (await commands[command]())(args);
    const answered = cli.answer(
      {
        help: command === "--help" || command === "-h" || command === "help",
        version: command === "--version",
      },
      usage,
    );
    if (answered !== undefined) return answered;
    throw new UsageError(
      command === undefined ? "missing command" : `unknown command ${JSON.stringify(command)}`,
    );
  } catch (error) {
    if (XError.is(error, "ERR_X_USAGE"))
      return cli.usageError(error, isCommand(command) ? command : undefined, asksForJsonLogs(args));
    throw error;
  }
}

/** Runs x-supervisor with the process's arguments (started by cli.ts); sets the exit code. */
export async function run(): Promise<void> {
  // `x-supervisor status … | head`: a reader that goes away ends the command with 141, without a stack trace.
  exitQuietlyOnBrokenPipe();
  process.exitCode = await main(process.argv.slice(2));
}
