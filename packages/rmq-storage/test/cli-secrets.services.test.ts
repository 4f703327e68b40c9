import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AMQP_URL, PG_URL, requireService } from "@x/test-support/services";
import { testTempDir } from "@x/test-support/temp-dir";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { openPostgresStorage, openSqliteStorage, RmqStorageServer } from "../src/index.js";
import { cliEnv, runCli, sandbox, spawnServer } from "./stack.js";

const exec = promisify(execFile);
const box = sandbox("clisecrets");
const user = uniqueName("clisecrets");
const secret = `Cli-${randomBytes(6).toString("hex")}-pw`;
const pgSecret = `Pg-${randomBytes(6).toString("hex")}-pw`;
const broker = new URL(AMQP_URL);
const secretUrl = `amqp://${user}:${secret}@${broker.host}/`;
const schemas: string[] = [];

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  await exec("rabbitmqctl", ["add_user", user, secret]);
  await exec("rabbitmqctl", ["set_permissions", "-p", "/", user, ".*", ".*", ".*"]);
}, 60_000);
afterAll(async () => {
  await exec("rabbitmqctl", ["delete_user", user]).catch(() => {});
  for (const schema of schemas) await (await openPostgresStorage(PG_URL, { schema })).drop();
  await box.cleanup();
}, 60_000);

/** A 0600 file holding `text`. */
function secretFile(text: string): string {
  const path = join(testTempDir("rmq-storage-cli-secret"), "url");
  writeFileSync(path, `${text}\n`);
  chmodSync(path, 0o600);
  return path;
}

/** One request a stub management API received. */
interface Received {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
}

/** Answers like the management API: one active consumer on `queue`, named `connection`. */
function managementStub(queue: string, connection: string) {
  const received: Received[] = [];
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    received.push({ method: request.method, url: request.url, authorization: request.headers.authorization });
    response.setHeader("content-type", "application/json");
    if (request.url?.startsWith("/api/queues/"))
      response.end(JSON.stringify([{ name: queue, messages_unacknowledged: 7 }]));
    else if (request.url?.startsWith("/api/consumers/"))
      response.end(
        JSON.stringify([
          { queue: { name: queue }, active: true, channel_details: { connection_name: "peer" } },
        ]),
      );
    else if (request.url?.startsWith("/api/vhosts/"))
      response.end(JSON.stringify([{ name: "peer", user_provided_name: connection }]));
    else {
      response.statusCode = 404;
      response.end("[]");
    }
  };
  return { received, handler };
}

/** A child process that this test ends. */
function track(child: ChildProcess): ChildProcess {
  onTestFinished(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  return child;
}

/** A TCP port free right now on `host`. */
async function freePort(host: string): Promise<number> {
  const server = createTcpServer().listen(0, host);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** Waits until something accepts TCP connections on host:port. */
async function listening(host: string, port: number): Promise<void> {
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = createTcpServer().listen(port, host);
        socket.once("error", () => resolve(true));
        socket.once("listening", () => socket.close(() => resolve(false)));
      }),
    20_000,
    `a listener on ${host}:${port}`,
  );
}

/** `socat` forwarding host:port (plain or TLS with the given certificate) to the test broker. */
async function brokerFront(host: string, tls?: { cert: string; key: string }): Promise<number> {
  const port = await freePort(host);
  const listen = tls
    ? `OPENSSL-LISTEN:${port},bind=${host},reuseaddr,fork,cert=${tls.cert},key=${tls.key},verify=0`
    : `TCP-LISTEN:${port},bind=${host},reuseaddr,fork`;
  track(spawn("socat", [listen, `TCP:${broker.hostname}:${broker.port || 5672}`], { stdio: "ignore" }));
  await listening(host, port);
  return port;
}

const nonLoopback = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === "IPv4" && !address.internal)?.address;

describe("x-rmq-storage keeps passwords off the command line", () => {
  it("serve reads AMQP_URL and --storage-file: /proc/<pid>/cmdline and its logs hold no password", async () => {
    const prefix = box.prefix();
    const schema = uniqueName("clisecrets");
    schemas.push(schema);
    const pg = new URL(PG_URL);
    pg.password = pgSecret;
    pg.searchParams.set("schema", schema);
    const server = await spawnServer(["--storage-file", secretFile(pg.toString()), "--prefix", prefix], {
      env: cliEnv({ AMQP_URL: secretUrl }),
    });
    track(server.child);
    const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, "utf8");
    expect(argv).toContain("--storage-file");
    expect(argv).not.toContain(secret);
    expect(argv).not.toContain(pgSecret);
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
    expect(server.child.exitCode).toBe(0);
    expect(server.stderr()).toContain(`amqp://${user}:***@`);
    expect(server.stderr()).toContain("postgres:***@");
    expect(server.stderr()).not.toContain(secret);
    expect(server.stderr()).not.toContain(pgSecret);
  }, 120_000);

  it("serve's start line and logs hide ?password= and ?sslpassword= of the storage URL", async () => {
    const prefix = box.prefix();
    const schema = uniqueName("clisecrets");
    schemas.push(schema);
    // PostgreSQL trusts local connections: the server ignores these passwords, which must never show.
    const [querySecret, keySecret] = [`${pgSecret}-query`, `${pgSecret}-key`];
    const pg = new URL(PG_URL);
    pg.search = `?schema=${schema}&password=${querySecret}&sslpassword=${keySecret}`;
    const server = await spawnServer(["--storage", pg.toString(), "--prefix", prefix], {
      env: cliEnv({ AMQP_URL: secretUrl }),
    });
    track(server.child);
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
    expect(server.child.exitCode).toBe(0);
    const output = `${server.stdout()}${server.stderr()}`;
    expect(server.stderr()).toMatch(/starting .*storage=\S*\?schema=\S+&password=\*\*\*&sslpassword=\*\*\*/);
    for (const hidden of [querySecret, keySecret, pgSecret, secret]) expect(output).not.toContain(hidden);
  }, 120_000);

  it("serve, stats and teardown read --amqp-file, and refuse one every user may read (exit 78)", async () => {
    const prefix = box.prefix();
    const file = secretFile(secretUrl);
    // `stats` refuses a prefix with no queue: a server declares them first.
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    const stats = await runCli(["stats", "--amqp-file", file, "--prefix", prefix, "--json"]);
    await server.stop();
    expect(stats.code).toBe(0);
    expect(stats.stdout.trim().split("\n")).toHaveLength(165);
    const teardown = await runCli(["teardown", "--amqp-file", file, "--prefix", prefix]);
    expect(teardown.code).toBe(0);
    chmodSync(file, 0o644);
    for (const command of ["stats", "teardown"]) {
      const refused = await runCli([command, "--amqp-file", file]);
      expect(refused.code).toBe(78);
      expect(refused.stderr).toContain("readable by every user");
      expect(refused.stderr).not.toContain(secret);
    }
    const serve = await runCli(["serve", "--amqp-file", file, "--storage", "sqlite::memory:"]);
    expect(serve.code).toBe(78);
  }, 120_000);
});

describe("x-rmq-storage stats and the management API", () => {
  it("reads unacked and the active consumer from the real management API on loopback", async () => {
    const prefix = box.prefix();
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    onTestFinished(() => server.stop());
    const queue = `${prefix}content_add.unknown.0`;
    const named = new RegExp(`^x-rmq-storage \\S+ pid ${process.pid} ranges 0-f$`);
    // The management API lists a consumer before its connection's chosen name: until then `stats` names the
    // active consumer by its tag. Wait for the connection's name.
    const row = await waitFor(
      async () => {
        const { stdout } = await runCli(["stats", "--prefix", prefix, "--json"], cliEnv({ AMQP_URL }));
        const found = stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as { queue: string; active: string | null; unacked: number | null })
          .find((entry) => entry.queue === queue);
        return found?.active && named.test(found.active) ? found : undefined;
      },
      60_000,
      "the management API to list the consumer, named by its connection",
    );
    expect(row).toMatchObject({ unacked: 0, consumers: 1 });
    expect(row.active).toMatch(named);
  }, 120_000);

  // No TLS-enabled broker runs here: socat terminates TLS in front of the real broker (amqps://), and a
  // node:https stub on 127.0.0.2:15671 stands in for the management API, recording what it receives.
  it("talks https to <host>:15671 when the broker URL is amqps://", async () => {
    const dir = testTempDir("rmq-storage-tls");
    const [cert, key] = [join(dir, "cert.pem"), join(dir, "key.pem")];
    await exec("openssl", [
      ..."req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.2".split(" "),
      ...["-addext", "subjectAltName=IP:127.0.0.2", "-keyout", key, "-out", cert],
    ]);
    const prefix = box.prefix();
    const queue = `${prefix}content_add.unknown.0`;
    const stub = managementStub(queue, "stub connection");
    const https = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, stub.handler);
    https.listen(15671, "127.0.0.2");
    await once(https, "listening");
    onTestFinished(() => new Promise<void>((resolve) => https.close(() => resolve())));
    const port = await brokerFront("127.0.0.2", { cert, key });
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    onTestFinished(() => server.stop());
    const { code, stdout, stderr } = await runCli(
      ["stats", "--prefix", prefix, "--json"],
      cliEnv({ AMQP_URL: `amqps://guest:guest@127.0.0.2:${port}/`, NODE_EXTRA_CA_CERTS: cert }),
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    // Figures from the broker (through TLS) and from the stub (over https).
    expect(stdout).toContain(
      `{"queue":"${queue}","ready":0,"unacked":7,"consumers":1,"active":"stub connection"}`,
    );
    expect(stub.received.map((r) => r.url).sort()).toEqual([
      "/api/consumers/%2F",
      "/api/queues/%2F?columns=name,messages_unacknowledged",
      "/api/vhosts/%2F/connections?columns=name,user_provided_name",
    ]);
    expect(stub.received[0]?.authorization).toBe(`Basic ${Buffer.from("guest:guest").toString("base64")}`);
  }, 120_000);

  it.skipIf(nonLoopback === undefined)(
    "refuses, exit 78, to send credentials over http to a host that is not loopback, unless --management says so",
    async () => {
      const host = nonLoopback as string;
      const prefix = box.prefix();
      const stub = managementStub(`${prefix}content.dead`, "stub connection");
      const http = createHttpServer(stub.handler).listen(0, host);
      await once(http, "listening");
      onTestFinished(() => new Promise<void>((resolve) => http.close(() => resolve())));
      const port = await brokerFront(host);
      const url = `amqp://guest:guest@${host}:${port}/`;
      // The default would be http://<host>:15672 (a real management API listens there on every address).
      const refused = await runCli(["stats", "--prefix", prefix], cliEnv({ AMQP_URL: url }));
      expect(refused.code).toBe(78);
      expect(refused.stderr).toContain("explicit management URL");
      expect(refused.stderr).toContain("amqp://guest:***@");
      expect(refused.stderr).not.toContain("guest:guest");
      const management = `http://${host}:${(http.address() as AddressInfo).port}/`;
      // `stats` refuses a prefix with no queue: a server declares them first.
      const server = await RmqStorageServer.start({
        url: AMQP_URL,
        storage: () => openSqliteStorage(":memory:"),
        prefix,
      });
      onTestFinished(() => server.stop());
      const asked = await runCli(
        ["stats", "--prefix", prefix, "--json", "--management", management],
        cliEnv({ AMQP_URL: url }),
      );
      expect(asked.code).toBe(0);
      expect(stub.received).toHaveLength(3);
      expect(stub.received[0]?.authorization).toBe(`Basic ${Buffer.from("guest:guest").toString("base64")}`);
    },
    120_000,
  );
});
