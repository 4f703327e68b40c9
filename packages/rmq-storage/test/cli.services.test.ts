import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { testTempDir } from "@x/test-support/temp-dir";
import { waitFor } from "@x/test-support/wait-for";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { declareTopology, topology } from "../src/amqp.js";
import { connectBroker } from "../src/connect.js";
import { EntityType, openSqliteStorage, RmqStorageClient, RmqStorageServer } from "../src/index.js";
import { queueStats } from "../src/stats.js";
import { activeConsumers, brokerNames, queueDepth } from "./broker.js";
import { randomId } from "./fixture.js";
import { cliCommand, runCli, sandbox, serveArgs, spawnServer } from "./stack.js";

const box = sandbox("cli");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

describe("x-rmq-storage", () => {
  it("prints help with exit 0 and rejects bad command lines with 64 and bad storage with 78", async () => {
    const [help, serveHelp, statsHelp, teardownHelp, unknown, noAmqp, noStorage, badFlag, badStorage] =
      await Promise.all([
        runCli(["--help"]),
        runCli(["serve", "--help"]),
        runCli(["stats", "-h"]),
        runCli(["teardown", "--help"]),
        runCli(["launch"]),
        runCli(["stats"]),
        runCli(["serve", "--amqp", AMQP_URL]),
        runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite:x", "--colour"]),
        runCli(["serve", "--amqp", AMQP_URL, "--storage", "mysql://db"]),
      ]);
    expect([help.code, serveHelp.code, statsHelp.code, teardownHelp.code]).toEqual([0, 0, 0, 0]);
    expect(help.stdout).toContain("teardown");
    expect(serveHelp.stdout).toContain("--storage SPEC");
    expect(serveHelp.stdout).toContain("--ready-fd N");
    expect(statsHelp.stdout).toContain("--management URL");
    expect(teardownHelp.stdout).toContain("--drop-storage SPEC");
    expect([unknown.code, noAmqp.code, noStorage.code, badFlag.code]).toEqual([64, 64, 64, 64]);
    expect(noStorage.stderr).toContain("--storage");
    expect(badStorage.code).toBe(78);
    const [oldName, badFd, closedFd, teardownNoAmqp, teardownBadStorage] = await Promise.all([
      runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--batch-size", "100"]),
      runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--ready-fd", "1"]),
      runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--ready-fd", "99"]),
      runCli(["teardown"]),
      runCli(["teardown", "--amqp", AMQP_URL, "--drop-storage", "mysql://db"]),
    ]);
    expect([oldName.code, badFd.code, closedFd.code, teardownNoAmqp.code]).toEqual([64, 64, 64, 64]);
    expect(closedFd.stderr).toContain("--ready-fd 99 is not an open file descriptor");
    expect(teardownBadStorage.code).toBe(78);
  }, 60_000);

  it("serve --ranges serves only those ranges; --standby waits for another server; bad values exit 64", async () => {
    const bad = await Promise.all(
      [
        ["--ranges", "0-g"],
        ["--ranges", "7-0"],
        ["--ranges", ""],
        ["--standby", "0"],
        ["--standby", "2h"],
      ].map((flags) => runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", ...flags])),
    );
    expect(bad.map((r) => r.code)).toEqual([64, 64, 64, 64, 64]);
    expect(bad[0]?.stderr).toContain("--ranges");
    expect(bad[3]?.stderr).toContain("--standby");
    const prefix = box.prefix();
    const args = [...serveArgs(`sqlite:${box.file()}`, prefix), "--log-level", "warn"];
    // A standby started first waits, and takes the queues only once an active server consumes them.
    const standby = await spawnServer([...args, "--ranges", "8-f", "--standby", "60"], {
      waitForReady: false,
    });
    onTestFinished(() => {
      if (standby.child.exitCode === null) standby.child.kill("SIGKILL");
    });
    await waitFor(
      async () => (await queueDepth(`${prefix}content_add.unknown.8`)) !== null,
      30_000,
      "the standby to declare its queues",
    );
    const active = await spawnServer([...args, "--ranges", "8-f"]);
    onTestFinished(() => {
      if (active.child.exitCode === null) active.child.kill("SIGKILL");
    });
    await standby.ready();
    const rows = await queueStats({ url: AMQP_URL, prefix, management: "http://127.0.0.1:1" });
    const consumers = (range: string) =>
      rows.find((r) => r.queue === `${prefix}content_add.unknown.${range}`)?.consumers;
    expect([..."0123456789abcdef"].map(consumers)).toEqual([...Array(8).fill(null), ...Array(8).fill(2)]);
    const chosen = await activeConsumers(prefix);
    expect(chosen.size).toBe(80);
    for (const tag of chosen.values()) expect(tag).toContain(` pid ${active.child.pid} ranges 8-f `);
    // Each server names its connection after its host, pid, ranges and role (what stats shows as active).
    const { stdout } = await promisify(execFile)("rabbitmqctl", [
      "list_connections",
      "-q",
      "client_properties",
    ]);
    expect(stdout).toContain(`x-rmq-storage ${hostname()} pid ${active.child.pid} ranges 8-f"`);
    expect(stdout).toContain(`x-rmq-storage ${hostname()} pid ${standby.child.pid} ranges 8-f standby"`);
    for (const server of [standby, active]) server.child.kill("SIGTERM");
    expect(await Promise.all([once(standby.child, "exit"), once(active.child, "exit")])).toEqual([
      [0, null],
      [0, null],
    ]);
  }, 90_000);

  it("serve --heartbeat takes a duration in seconds or with a suffix, at most 1h; anything else exits 64", async () => {
    const [word, negative, tooLong] = await Promise.all(
      ["soon", "-1", "2h"].map((value) =>
        runCli(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--heartbeat", value]),
      ),
    );
    expect([word?.code, negative?.code, tooLong?.code]).toEqual([64, 64, 64]);
    expect(word?.stderr).toContain("--heartbeat");
    expect(tooLong?.stderr).toContain("--heartbeat");
    const server = await spawnServer([
      "--amqp",
      AMQP_URL,
      "--storage",
      `sqlite:${box.file()}`,
      "--prefix",
      box.prefix(),
      "--heartbeat",
      "1.5m",
    ]);
    server.child.kill("SIGTERM");
    const [code] = await once(server.child, "exit");
    expect(code).toBe(0);
  }, 60_000);

  it("stats: a prefix with no queue is an error naming the prefix, in both formats", async () => {
    const typo = box.prefix();
    for (const format of [[], ["--json"]]) {
      const missing = await runCli(["stats", "--amqp", AMQP_URL, "--prefix", typo, ...format]);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toBe("");
      expect(missing.stderr).toMatch(/^\S+ ERROR \[x-rmq-storage stats\] [^\n]*\n$/);
      expect(missing.stderr).toContain(
        ` no queue of prefix ${JSON.stringify(typo)} exists on the broker: is the prefix right, and has x-rmq-storage serve declared its topology? prefix=${typo}\n`,
      );
    }
  }, 60_000);

  it("stats: one JSON line per worker and dead-letter queue, with ready, unacked and consumers", async () => {
    const prefix = box.prefix();
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    const { code, stdout, stderr } = await runCli([
      "stats",
      "--amqp",
      AMQP_URL,
      "--prefix",
      prefix,
      "--json",
      "--management",
      "http://127.0.0.1:1",
    ]);
    await server.stop();
    expect(code).toBe(0);
    // An unreachable management API is a warning naming it and the reason, not silent nulls.
    expect(stderr).toMatch(
      /WARN +\[x-rmq-storage stats\] cannot read the management API at http:\/\/127\.0\.0\.1:1\/ \(fetch failed: .*\): unacked and active are unknown/,
    );
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toHaveLength(165);
    expect(rows).toContainEqual({
      queue: `${prefix}content_add.unknown.0`,
      ready: 0,
      unacked: null,
      consumers: 1,
      active: null,
    });
    expect(rows).toContainEqual({
      queue: `${prefix}content.dead`,
      ready: 0,
      unacked: null,
      consumers: 0,
      active: null,
    });
    const table = await runCli(["stats", "--amqp", AMQP_URL, "--prefix", prefix]);
    expect(table.stdout.split("\n")[0]).toMatch(/^queue\s+ready\s+unacked\s+consumers\s+active$/);
    expect(table.stderr).toBe(""); // the management API of the broker answered
  }, 60_000);

  it("stats exits 69 when the broker cannot be reached", async () => {
    const { code, stderr } = await runCli(["stats", "--amqp", "amqp://guest:guest@127.0.0.1:1"]);
    expect(code).toBe(69);
    expect(stderr).toContain("cannot connect");
  }, 30_000);
});

describe("x-rmq-storage serve: ready, then teardown", () => {
  it("prints the ready line once every queue has a consumer; writes and reads work; teardown leaves nothing", async () => {
    const file = box.file();
    const prefix = box.prefix().slice(0, -1);
    const server = await spawnServer(serveArgs(`sqlite:${file}`, prefix));
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    expect(server.stdout()).toBe("ready\n");
    // At the ready line, every worker queue already has its consumer.
    const stats = await queueStats({ url: AMQP_URL, prefix, management: "http://127.0.0.1:1" });
    expect(stats.filter((row) => !row.queue.endsWith(".dead")).every((row) => row.consumers === 1)).toBe(
      true,
    );

    const local = await openSqliteStorage(file);
    onTestFinished(() => local.close());
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix });
    onTestFinished(() => client.close());
    const written = new Map(Array.from({ length: 2_000 }, (_, i) => [randomId(), BigInt(i + 1)] as const));
    expect(await client.contentAdd(written)).toBe(true);
    const some = [...written.keys()].slice(0, 1_000);
    expect(await client.contentGet(some)).toEqual(new Map(some.map((id) => [id, written.get(id)])));
    expect((await client.entityGetAll(EntityType.CONTENT)).size).toBe(2_000);
    await client.close();
    await local.close();

    const refused = await runCli(["teardown", "--amqp", AMQP_URL, "--prefix", prefix]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("in use");
    expect((await brokerNames(`${prefix}.`)).queues).toHaveLength(165);

    server.child.kill("SIGTERM");
    const [code] = await once(server.child, "exit");
    expect(code).toBe(0);
    const teardown = await runCli([
      "teardown",
      "--amqp",
      AMQP_URL,
      "--prefix",
      prefix,
      "--drop-storage",
      `sqlite:${file}`,
    ]);
    expect(teardown.code, teardown.stderr).toBe(0);
    expect(teardown.stdout).toBe(
      `deleted 165 queues and 10 exchanges of prefix "${prefix}"\ndropped the storage\n`,
    );
    expect(await brokerNames(`${prefix}.`)).toEqual({ queues: [], exchanges: [] });
    expect(existsSync(file)).toBe(false);
  }, 120_000);

  it("--ready-fd N gets the ready line and is closed; stdout stays empty", async () => {
    const child = spawn(
      process.execPath,
      cliCommand("serve", ...serveArgs("sqlite::memory:", box.prefix()), "--ready-fd", "3"),
      { stdio: ["ignore", "pipe", "pipe", "pipe"] },
    );
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    const stdout = collect(child.stdout);
    const fd3 = child.stdio[3] as Readable;
    const line = collect(fd3);
    await once(fd3, "end");
    expect(line()).toBe("ready\n");
    child.kill("SIGINT");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(stdout()).toBe("");
  }, 60_000);

  it("tells systemd READY=1 through NOTIFY_SOCKET once ready", async () => {
    const socket = join(testTempDir("rmq-storage-notify-"), "notify.sock");
    const receiver = spawn("socat", ["-u", `UNIX-RECV:${socket}`, "-"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    onTestFinished(() => {
      receiver.kill();
    });
    const received = collect(receiver.stdout);
    await waitFor(() => existsSync(socket), 10_000, "socat's socket");
    const server = await spawnServer(
      ["--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--prefix", box.prefix()],
      { env: { ...process.env, NOTIFY_SOCKET: socket } },
    );
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    await waitFor(() => received().includes("READY=1"), 20_000, "READY=1 on the notify socket");
    server.child.kill("SIGTERM");
    expect((await once(server.child, "exit"))[0]).toBe(0);
  }, 60_000);
});

describe("x-rmq-storage serve: a signal while it starts", () => {
  it("stops gracefully once started, exits 0, and never says ready", async () => {
    const proxy = await startTcpProxy(AMQP_URL);
    onTestFinished(() => proxy.close());
    proxy.refuse(true);
    const child = spawn(
      process.execPath,
      cliCommand("serve", "--amqp", proxy.url, "--storage", "sqlite::memory:", "--prefix", box.prefix()),
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    const [stdout, stderr] = [collect(child.stdout), collect(child.stderr)];
    // The broker refuses it, so it is still starting once it says so (its signal handlers are in place).
    await waitFor(() => stderr().includes("starting"), 30_000, "serve to start");
    child.kill("SIGTERM");
    proxy.refuse(false);
    const [code] = await once(child, "exit");
    expect(code, stderr()).toBe(0);
    expect(stderr()).toContain("serving");
    expect(stderr()).toContain("stopped");
    expect(stdout()).toBe("");
  }, 60_000);
});

describe("broken pipes", () => {
  /** Runs the CLI with the read end of its stdout closed before it writes anything (`… | head -0`). */
  async function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, cliCommand(...args), { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    const stderr = collect(child.stderr);
    const [code] = await once(child, "exit");
    return { code, stderr: stderr() };
  }

  it("every printing command exits 141 quietly when its reader has gone", async () => {
    const declared = box.prefix();
    const connection = await connectBroker({ url: AMQP_URL, heartbeatMs: 0, timeoutMs: 5_000 });
    await declareTopology(connection, topology(declared));
    await connection.close();
    const commands = [
      ["--help"],
      ["help"],
      ["serve", "--help"],
      ["stats", "--help"],
      ["teardown", "--help"],
      ["stats", "--amqp", AMQP_URL, "--prefix", declared],
      ["stats", "--amqp", AMQP_URL, "--prefix", declared, "--json"],
      ["teardown", "--amqp", AMQP_URL, "--prefix", box.prefix()],
    ];
    const results = await Promise.all(commands.map(runIntoClosedPipe));
    for (const [i, result] of results.entries())
      expect(result, commands[i]?.join(" ")).toEqual({ code: 141, stderr: "" });
  }, 120_000);

  it("serve keeps going when its stdout and stderr readers go away, and still stops gracefully", async () => {
    const server = await spawnServer(serveArgs("sqlite::memory:", box.prefix()));
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    server.child.stdout?.destroy();
    server.child.stderr?.destroy();
    // It logs "stopping gracefully" into the broken stderr pipe.
    server.child.kill("SIGTERM");
    const [code] = await once(server.child as ChildProcess, "exit");
    expect(code).toBe(0);
  }, 60_000);
});

/** Collects a stream's text; the function returns what arrived so far. */
function collect(stream: Readable | null | undefined): () => string {
  let text = "";
  stream?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return () => text;
}
