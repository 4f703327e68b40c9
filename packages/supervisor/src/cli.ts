#!/usr/bin/env node
import { XError } from "@x/core";
import { ExitCode, exitQuietlyOnBrokenPipe } from "@x/core/internal";
import { queueHtmlCommand, queueHtmlUsage } from "./cli-queue-html.js";
import { serveCommand, serveUsage } from "./cli-serve.js";
import { statusCommand, statusUsage } from "./cli-status.js";
import { workerCommand, workerUsage } from "./cli-worker.js";

const usage = `Usage: x-supervisor <command> [arguments]

Commands:
  serve <db> <fetchers-dir> <socket> [--socket-mode MODE] [--socket-group GROUP] [--max-connections N]
        [--tls HOST:PORT --tls-cert FILE --tls-key FILE --tls-ca FILE] [--http [HOST:]PORT]
                                                      run the queue daemon
  worker <socket> [--timeout DURATION] [--max-memory SIZE] -- <command> [args…]
  worker --connect tls://HOST:PORT --tls-cert FILE --tls-key FILE --tls-ca FILE [options] -- <command> [args…]
                                                      run jobs from the daemon
  status <db> [--json]                                print the queue's figures
  queue-html <db> <out.html>                          write a static HTML page of the queue

Run x-supervisor <command> --help for details.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case "serve":
        return await serveCommand(args);
      case "worker":
        return await workerCommand(args);
      case "status":
        return statusCommand(args);
      case "queue-html":
        return queueHtmlCommand(args);
      case "--help":
      case "-h":
      case "help":
        process.stdout.write(usage);
        return ExitCode.OK;
      default:
        process.stderr.write(`x-supervisor: unknown command ${command ?? "(none)"}\n\n${usage}`);
        return ExitCode.USAGE;
    }
  } catch (error) {
    if (XError.is(error, "ERR_X_USAGE")) {
      const help =
        command === "serve"
          ? serveUsage
          : command === "worker"
            ? workerUsage
            : command === "queue-html"
              ? queueHtmlUsage
              : statusUsage;
      process.stderr.write(`x-supervisor ${command}: ${error.message}\n\n${help}`);
      return ExitCode.USAGE;
    }
    throw error;
  }
}

// `x-supervisor status … | head`: a reader that goes away ends the command with 141, without a stack trace.
exitQuietlyOnBrokenPipe();
process.exitCode = await main(process.argv.slice(2));
