import { parseCommandLine, UsageError } from "@x/core/internal";

/** Everything one demo run needs to know, resolved from the command line. */
export interface DemoConfig {
  /** Jobs the fetcher writes. */
  jobs: number;
  /** Worker loops taking jobs over the supervisor's socket. */
  workers: number;
  /** The short run used by CI. */
  quick: boolean;
  /** RabbitMQ URL: enables the rmq-storage and polling-catalog stages. */
  amqpUrl: string | undefined;
  /** Print the summary as one JSON object instead of a table. */
  json: boolean;
  /** Log the packages' info lines to stderr. */
  verbose: boolean;
  /** Keep the temporary directory (databases, fetcher file) and print its path. */
  keep: boolean;
  /** Time budget of a job once it has started, in ms (the TimeGuard timeout). */
  timeoutMs: number;
  /** Time between escalation levels, in ms. */
  graceMs: number;
  /** Memory budget of a command job (its RSS), in bytes (the MemGuard limit). */
  maxMemoryBytes: number;
  /** How long the reference stream stays down once the checkpoint has noticed, in ms. */
  outageMs: number;
  /** The whole run must end within this, in ms, or the demo fails naming the stage it was waiting for. */
  deadlineMs: number;
}

/** The text of `pnpm demo --help`. */
export const HELP = `Usage: pnpm demo [--quick] [--amqp URL] [--jobs N] [--workers N] [--json] [--verbose] [--keep]

One end-to-end run of the @x toolkit on embedded defaults (no broker needed):

  1. a fetcher writes a file of jobs (a .part that grows, then renamed to .txt) into a fetchers directory;
  2. @x/supervisor follows the file and queues the jobs in SQLite (the nixpkgs-update schema);
  3. several workers take jobs over the supervisor's Unix socket (READY / DONE) and run each one under
     @x/process-guard: inline jobs get a cooperative AbortSignal, command jobs run as child processes
     watched by a TimeGuard and a MemGuard. Some jobs are built to stall, to hang while ignoring SIGINT,
     or to eat memory, so you see the guards abort, signal and escalate;
  4. the results stream through an @x/checkpoint whose dependency, a reference stream, goes down for a
     while: the checkpoint notices, pauses the results, and when the reference stream recovers it
     resumes them and reprocesses the results that were enriched with stale reference data;
  5. a summary table: jobs done, failed, timed out, stopped for memory, paused time, throughput.
     A live progress line is drawn on stderr when it is a terminal.

With --amqp URL (e.g. amqp://guest:guest@127.0.0.1:5672) two more stages run against that RabbitMQ:
  6. every result is also written through @x/rmq-storage (client -> RabbitMQ -> server -> SQLite) and
     read back from the store;
  7. every job that did not succeed becomes a follow-up row in a fake ERMrest catalog
     (@x/polling-catalog/testing), and two @x/polling-catalog agents, woken by change notices,
     claim the rows with ETag-guarded updates and mark them done.

The run checks itself: every count is compared with what the fetcher planned, and the exit status
is 0 only when everything matched; otherwise the mismatches are printed on stderr and it exits 1.

Options:
  --quick        the short run (2 000 jobs, 1 s job timeout, 1 s outage); CI runs this
  --amqp URL     also run stages 6 and 7 against this RabbitMQ (start one with \`pnpm services\`)
  --jobs N       number of jobs (200 to 100 000; default 2 000 with --quick, else 5 000)
  --workers N    number of workers (1 to 64; default 8 with --quick, else 12)
  --json         print the summary as one JSON object on stdout
  --verbose      log the packages' info lines on stderr
  --keep         keep the temporary directory (databases, fetcher file) and print its path
  -h, --help     show this text

Exit status: 0 success, 1 a stage failed or a check did not match, 64 usage error, 130/143 interrupted.
`;

function integer(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`invalid option --${name}: ${text} (expected an integer from ${min} to ${max})`);
  }
  return value;
}

/**
 * Parses the demo's arguments.
 *
 * @returns the configuration, or `"help"` for `--help`
 * @throws UsageError for an unknown option or a bad value
 */
export function parseConfig(args: string[]): DemoConfig | "help" {
  const { values } = parseCommandLine({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      quick: { type: "boolean" },
      amqp: { type: "string" },
      jobs: { type: "string" },
      workers: { type: "string" },
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      keep: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const quick = values.quick === true;
  const amqpUrl = values.amqp;
  if (amqpUrl !== undefined && !/^amqps?:\/\/./.test(amqpUrl)) {
    throw new UsageError(`invalid option --amqp: ${amqpUrl} (expected an amqp:// or amqps:// URL)`);
  }
  return {
    jobs: integer("jobs", values.jobs, quick ? 2_000 : 5_000, 200, 100_000),
    workers: integer("workers", values.workers, quick ? 8 : 12, 1, 64),
    quick,
    amqpUrl,
    json: values.json === true,
    verbose: values.verbose === true,
    keep: values.keep === true,
    timeoutMs: quick ? 1_000 : 2_000,
    graceMs: quick ? 250 : 500,
    maxMemoryBytes: 160 * 1024 * 1024,
    outageMs: quick ? 1_000 : 3_000,
    deadlineMs: quick ? 120_000 : 600_000,
  };
}
