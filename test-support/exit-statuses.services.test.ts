import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { makePki } from "../packages/supervisor/test/certificates.js";
import { AMQP_URL, PG_URL, requireService } from "./services.js";
import { testTempDir } from "./temp-dir.js";
import { waitFor } from "./wait-for.js";

// Every documented failure of every command, run for real, against the root README's table of exit statuses:
// the status each case expects is read from README.md, so the table and the commands cannot drift apart.

const root = fileURLToPath(new URL("..", import.meta.url));

/** The root README's table: failure kind → exit status. */
function readmeStatuses(): Map<string, number> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = /^### Exit statuses\n([\s\S]*?)(?=^##)/m.exec(readme)?.[1];
  if (section === undefined) throw new Error("README.md has no '### Exit statuses' section");
  const statuses = new Map<string, number>();
  for (const [, status, kind] of section.matchAll(/^\| (\d+) \| ([^|]+?) \|/gm))
    statuses.set(kind!, Number(status));
  return statuses;
}

const cliPaths = {
  "x-supervisor": join(root, "packages/supervisor/src/cli.ts"),
  "x-rmq-storage": join(root, "packages/rmq-storage/src/cli.ts"),
};

interface Run {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs a command from its TypeScript sources, with `AMQP_URL` and `STORAGE_URL` unset. */
function run(command: keyof typeof cliPaths, args: string[]): Run {
  const { AMQP_URL: _a, STORAGE_URL: _s, ...env } = process.env;
  const child = spawn(
    process.execPath,
    ["--conditions=@x/source", "--import", "tsx", cliPaths[command], ...args],
    { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    err += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { child, stderr: () => err, exited };
}

let taken: Server;
let portInUse: number;
let unusedPort: number;

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  await requireService("PostgreSQL", PG_URL);
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  portInUse = (taken.address() as { port: number }).port;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  unusedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterAll(() => taken?.close());

/** A running `x-supervisor serve` in a fresh directory: its database, fetcher directory and socket. */
async function runningDaemon() {
  const dir = testTempDir("x-exit-statuses-");
  const paths = {
    dir,
    db: join(dir, "state.db"),
    fetchers: join(dir, "fetchers"),
    socket: join(dir, "s.sock"),
  };
  const daemon = run("x-supervisor", ["serve", paths.db, paths.fetchers, paths.socket]);
  await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the first daemon");
  return paths;
}

/** `base` with some of its parts replaced (URL's setters apply them). */
const changed = (base: string, parts: Partial<Pick<URL, "password" | "port" | "pathname">>): string =>
  Object.assign(new URL(base), parts).toString();

type Case = [title: string, kind: string, command: keyof typeof cliPaths, args: () => Promise<string[]>];

const fresh = () => {
  const dir = testTempDir("x-exit-statuses-");
  return [join(dir, "state.db"), join(dir, "fetchers"), join(dir, "s.sock")];
};

const cases: Case[] = [
  ["x-supervisor serve: a usage error", "usage", "x-supervisor", async () => ["serve", "only-one"]],
  [
    "x-supervisor serve --http: a port in use",
    "in use",
    "x-supervisor",
    async () => [...["serve", ...fresh()], "--http", `127.0.0.1:${portInUse}`],
  ],
  [
    "x-supervisor serve --tls: a port in use",
    "in use",
    "x-supervisor",
    async () => {
      const [db, fetchers, socket] = fresh();
      const pki = makePki(testTempDir("x-exit-statuses-pki-"));
      return [
        ...["serve", db!, fetchers!, socket!, "--tls", `127.0.0.1:${portInUse}`],
        ...["--tls-cert", pki.server.certFile, "--tls-key", pki.server.keyFile, "--tls-ca", pki.ca.certFile],
      ];
    },
  ],
  [
    "x-supervisor serve: a socket in use",
    "in use",
    "x-supervisor",
    async () => {
      const daemon = await runningDaemon();
      const [db, fetchers] = fresh();
      return ["serve", db!, fetchers!, daemon.socket];
    },
  ],
  [
    "x-supervisor serve: a database in use, with the very same arguments",
    "in use",
    "x-supervisor",
    async () => {
      const daemon = await runningDaemon();
      return ["serve", daemon.db, daemon.fetchers, daemon.socket];
    },
  ],
  [
    "x-supervisor serve: an unknown --socket-group",
    "unusable",
    "x-supervisor",
    async () => [...["serve", ...fresh()], "--socket-group", "no-such-group-x"],
  ],
  [
    "x-supervisor status: a database that does not exist",
    "unusable",
    "x-supervisor",
    async () => ["status", fresh()[0]!],
  ],
  [
    "x-rmq-storage serve --metrics: a port in use",
    "in use",
    "x-rmq-storage",
    async () => [
      ...["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:"],
      ...["--metrics", `127.0.0.1:${portInUse}`],
    ],
  ],
  [
    "x-rmq-storage serve: an unsupported storage",
    "unusable",
    "x-rmq-storage",
    async () => ["serve", "--amqp", AMQP_URL, "--storage", "mysql://db"],
  ],
  [
    "x-rmq-storage serve: RabbitMQ refuses the login",
    "refused",
    "x-rmq-storage",
    async () => [
      ...["serve", "--storage", "sqlite::memory:"],
      ...["--amqp", changed(AMQP_URL, { password: "wrong" })],
    ],
  ],
  [
    "x-rmq-storage serve: PostgreSQL refuses the database",
    "refused",
    "x-rmq-storage",
    async () => [
      ...["serve", "--amqp", AMQP_URL],
      ...["--storage", changed(PG_URL, { pathname: "/no_such_database_x" })],
    ],
  ],
  [
    "x-rmq-storage serve --processes 2: PostgreSQL refuses the database",
    "refused",
    "x-rmq-storage",
    async () => [
      ...["serve", "--amqp", AMQP_URL, "--processes", "2"],
      ...["--storage", changed(PG_URL, { pathname: "/no_such_database_x" })],
    ],
  ],
  [
    "x-rmq-storage serve: RabbitMQ does not answer",
    "unavailable",
    "x-rmq-storage",
    async () => [
      ...["serve", "--storage", "sqlite::memory:"],
      ...["--amqp", changed(AMQP_URL, { port: String(unusedPort) })],
    ],
  ],
  [
    "x-rmq-storage serve: PostgreSQL does not answer",
    "unavailable",
    "x-rmq-storage",
    async () => [
      ...["serve", "--amqp", AMQP_URL],
      ...["--storage", changed(PG_URL, { port: String(unusedPort) })],
    ],
  ],
  [
    "x-rmq-storage stats: RabbitMQ does not answer",
    "unavailable",
    "x-rmq-storage",
    async () => ["stats", "--amqp", changed(AMQP_URL, { port: String(unusedPort) })],
  ],
];

describe("every command's documented failures exit with the root README's status", () => {
  const statuses = readmeStatuses();

  it("the README's table has a status for every kind the cases use", () => {
    for (const [, kind] of cases) expect(statuses.get(kind), kind).toBeTypeOf("number");
    expect(statuses.get("in use")).toBe(78); // RestartPreventExitStatus=78 depends on it
  });

  it.each(cases)("%s: %s", async (_title, kind, command, args) => {
    const [subcommand, ...rest] = await args();
    const started = performance.now();
    const proc = run(command, [subcommand!, "--log-json", ...rest]);
    expect(await proc.exited, proc.stderr()).toBe(statuses.get(kind));
    // under --log-json, every line on stderr is one JSON object; the last one says why
    const records = proc
      .stderr()
      .trimEnd()
      .split("\n")
      .map((text) => JSON.parse(text) as { level: number; kind?: string });
    expect(records.at(-1), proc.stderr()).toMatchObject(
      kind === "usage" ? { level: 50, code: "ERR_X_USAGE" } : { level: 50, kind: kind.replace(" ", "-") },
    );
    // a dependency that does not answer gets the same short retry (3 s), whichever it is
    if (kind === "unavailable") expect(performance.now() - started).toBeGreaterThan(2_900);
  });
});
