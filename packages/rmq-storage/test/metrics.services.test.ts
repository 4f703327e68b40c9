import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { requestWithHost } from "@x/test-support/http-host";
import { parsePrometheusText, promtoolCheck, type Sample } from "@x/test-support/prometheus";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { waitFor } from "@x/test-support/wait-for";
import amqp from "amqplib";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  RmqStorageServer,
  type Sha1,
} from "../src/index.js";
import { activeConsumers, queueDepth } from "./broker.js";
import { randomId } from "./fixture.js";
import { runCli, type ServerChild, sandbox, serveArgs, spawnServer } from "./stack.js";

const box = sandbox("met");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

type Address = { host: string; port: number };

/** The metrics at `address`, once `promtool check metrics` and a strict parser have both accepted them. */
async function scrape({ host, port }: Address): Promise<Sample[]> {
  const response = await fetch(`http://${host}:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const verdict = promtoolCheck(text);
  expect(verdict.status, verdict.output).toBe(0);
  return parsePrometheusText(text);
}

/** The values of `x_rmq_storage_queue_active` at `address`, one per served queue. */
const gauge = async (address: Address): Promise<number[]> =>
  (await scrape(address)).filter((s) => s.name === "x_rmq_storage_queue_active").map((s) => s.value);

/** The sum of the samples of `name` whose labels include `labels`. */
function sum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);
}

/** The samples of `name`, by range. */
function byRange(samples: Sample[], name: string, labels: Record<string, string> = {}): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples)
    if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && s.value !== 0)
      out.set(s.labels.range as string, (out.get(s.labels.range as string) ?? 0) + s.value);
  return out;
}

/** Content rows of an SQLite storage file, by range (the first hex digit of the id). */
function contentRowsByRange(file: string): Map<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare("SELECT substr(lower(hex(sha1)), 1, 1) AS range, count(*) AS n FROM content GROUP BY range")
      .all() as Array<{ range: string; n: number }>;
    return new Map(rows.map((r) => [r.range, r.n]));
  } finally {
    db.close();
  }
}

/** The address a `serve --metrics` child logged. */
async function metricsAddress(server: ServerChild): Promise<Address> {
  const logged = () => /serving metrics host=(\S+) port=(\d+)/.exec(server.stderr());
  await waitFor(() => logged() !== null, 30_000, "the metrics address in the log");
  const [, host, port] = logged() as RegExpExecArray;
  return { host: host as string, port: Number(port) };
}

/** A port held by another listener until `release`. */
async function usedPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = createServer();
  holder.listen(0, "127.0.0.1");
  await once(holder, "listening");
  const { port } = holder.address() as { port: number };
  return { port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}

/** `count` random contents with dates. */
const contents = (count: number) =>
  new Map<Sha1, bigint>(Array.from({ length: count }, (_, i) => [randomId(), BigInt(i + 1)]));

/** A client writing to `prefix`, reading from `storage`; closed when the test ends. */
async function client(prefix: string, storage: ProvenanceStorage): Promise<RmqStorageClient> {
  const c = await RmqStorageClient.connect({ url: AMQP_URL, storage, prefix, waitMinMs: 60_000 });
  onTestFinished(() => c.close());
  return c;
}

/** Publishes `count` requests a server must dead-letter (not JSON) to `content_add.unknown.a`. */
async function publishInvalid(prefix: string, count: number): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createConfirmChannel();
    const { queue: replyTo } = await channel.assertQueue("", { exclusive: true });
    for (let i = 0; i < count; i++)
      channel.publish(`${prefix}content`, "content_add.unknown.a", Buffer.from("not json"), {
        correlationId: randomUUID(),
        messageId: `bad-${i}`,
        replyTo,
        persistent: true,
      });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

describe("x-rmq-storage serve --metrics", () => {
  it("serves metrics promtool accepts, whose items equal the stored rows and dead letters the broker's", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await spawnServer([...serveArgs(`sqlite:${file}`, prefix), "--metrics", "0"]);
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    const address = await metricsAddress(server);
    expect(address.host).toBe("127.0.0.1");

    const fresh = await scrape(address);
    // Every served queue's series exist from the start, at 0, so that rate() sees the first batch.
    expect(fresh.filter((s) => s.name === "x_rmq_storage_items_total")).toHaveLength(160);
    expect(sum(fresh, "x_rmq_storage_items_total")).toBe(0);

    const local = await openSqliteStorage(file);
    onTestFinished(() => local.close());
    const writer = await client(prefix, local);
    expect(await writer.contentAdd(contents(3_000))).toBe(true);
    expect(await writer.originAdd(new Map([[randomId(), "https://example.org/repo"]]))).toBe(true);
    await publishInvalid(prefix, 2);
    await waitFor(
      async () => sum(await scrape(address), "x_rmq_storage_dead_letters_total") === 2,
      30_000,
      "two dead letters counted",
    );

    const samples = await scrape(address);
    const rows = contentRowsByRange(file);
    expect([...rows.values()].reduce((a, b) => a + b)).toBe(3_000);
    expect(byRange(samples, "x_rmq_storage_items_total", { method: "content_add" })).toEqual(rows);
    expect(sum(samples, "x_rmq_storage_items_total", { method: "origin_add", relation: "unknown" })).toBe(1);
    expect((await queueDepth(`${prefix}content.dead`))?.ready).toBe(2);
    expect(
      sum(samples, "x_rmq_storage_dead_letters_total", {
        range: "a",
        method: "content_add",
        relation: "unknown",
      }),
    ).toBe(2);
    for (const method of ["content_add", "origin_add"]) {
      const batches = sum(samples, "x_rmq_storage_batches_total", { method });
      expect(batches).toBeGreaterThan(0);
      expect(sum(samples, "x_rmq_storage_commit_duration_seconds_count", { method })).toBe(batches);
      expect(sum(samples, "x_rmq_storage_messages_total", { method })).toBeGreaterThanOrEqual(batches);
    }
    expect(sum(samples, "x_rmq_storage_requeues_total")).toBe(0);

    // Active on every queue, as the broker says (rabbitmqctl, not the management API the gauge reads). The
    // management API lists a new consumer within its statistics interval (5 s by default).
    expect(sum(samples, "x_rmq_storage_management_up")).toBe(1);
    await waitFor(async () => (await gauge(address)).every((v) => v === 1), 20_000, "every queue active");
    expect(await gauge(address)).toHaveLength(160);
    const broker = await activeConsumers(prefix);
    expect(broker.size).toBe(160);
    expect([...broker.values()].every((tag) => tag.startsWith(`x-rmq-storage `))).toBe(true);

    expect((await fetch(`http://127.0.0.1:${address.port}/other`)).status).toBe(404);
    server.child.kill("SIGTERM");
    expect((await once(server.child, "exit"))[0]).toBe(0);
  }, 120_000);

  it("shows a standby's queues at 0 until the active server stops, then at 1, as the broker sees it", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const args = [...serveArgs(`sqlite:${file}`, prefix), "--ranges", "8-f", "--metrics", "0"];
    const active = await spawnServer(args);
    onTestFinished(() => {
      active.child.kill("SIGKILL");
    });
    const standby = await spawnServer([...args, "--standby", "60"]);
    onTestFinished(() => {
      standby.child.kill("SIGKILL");
    });
    const [activeAt, standbyAt] = [await metricsAddress(active), await metricsAddress(standby)];
    // The management API lists new consumers within its statistics interval (5 s by default).
    const both = async () => [await gauge(activeAt), await gauge(standbyAt)];
    await waitFor(async () => (await both())[0]?.every((v) => v === 1), 20_000, "the active server's gauge");
    expect(await both()).toEqual([Array(80).fill(1), Array(80).fill(0)]);
    expect([...(await activeConsumers(prefix)).values()].some((tag) => tag.includes("standby"))).toBe(false);

    active.child.kill("SIGTERM");
    await once(active.child, "exit");
    await waitFor(
      async () => (await gauge(standbyAt)).every((value) => value === 1),
      30_000,
      "the standby's gauge to show it active",
    );
    const broker = await activeConsumers(prefix);
    expect(broker.size).toBe(80);
    expect([...broker.values()].every((tag) => tag.includes("standby"))).toBe(true);
    standby.child.kill("SIGTERM");
    expect((await once(standby.child, "exit"))[0]).toBe(0);
  }, 120_000);

  it("refuses an address in use with exit 78, before connecting", async () => {
    const { port, release } = await usedPort();
    onTestFinished(release);
    const prefix = box.prefix();
    const run = await runCli(["serve", ...serveArgs("sqlite::memory:", prefix), "--metrics", String(port)]);
    expect(run.code).toBe(78);
    expect(run.stderr).toContain(`invalid option metrics: cannot listen on 127.0.0.1:${port}`);
    expect(await queueDepth(`${prefix}content_add.unknown.0`)).toBeNull();
  }, 60_000);
});

describe("RmqStorageServer's metrics option", () => {
  it("counts a failed write as a requeue, and its items once, when they are written", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    let failures = 1;
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      prefix,
      metrics: { port: 0 },
      storage: async () => {
        const storage = await openSqliteStorage(file);
        const contentAdd = storage.contentAdd.bind(storage);
        storage.contentAdd = (items) =>
          failures-- > 0 ? Promise.reject(new Error("disk full")) : contentAdd(items);
        return storage;
      },
    });
    onTestFinished(() => server.stop());
    const address = server.metricsAddress() as Address;
    expect(address.host).toBe("127.0.0.1");
    const local = await openSqliteStorage(file);
    onTestFinished(() => local.close());
    const written = new Map([[`3${randomId().slice(1)}`, 7n]]);
    expect(await (await client(prefix, local)).contentAdd(written)).toBe(true);
    const samples = await scrape(address);
    const labels = { range: "3", method: "content_add", relation: "unknown" };
    expect(sum(samples, "x_rmq_storage_requeues_total", labels)).toBe(1);
    expect(sum(samples, "x_rmq_storage_requeues_total")).toBe(1);
    expect(sum(samples, "x_rmq_storage_items_total", labels)).toBe(1);
    expect(sum(samples, "x_rmq_storage_batches_total")).toBe(1);
  }, 60_000);

  it("with processes > 1, the parent serves the children's counts and their active queues", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      prefix,
      storage: `sqlite:${file}`,
      processes: 2,
      metrics: { port: 0 },
    });
    onTestFinished(() => server.stop());
    expect(server.connectionNames()).toHaveLength(2);
    expect(new Set(server.connectionNames().map((name) => name.split(" pid ")[1]?.split(" ")[0])).size).toBe(
      2,
    );
    const local = await openSqliteStorage(file);
    onTestFinished(() => local.close());
    expect(await (await client(prefix, local)).contentAdd(contents(2_000))).toBe(true);
    const address = server.metricsAddress() as Address;
    await waitFor(
      async () => sum(await scrape(address), "x_rmq_storage_items_total") === 2_000,
      30_000,
      "the children's batches counted by the parent",
    );
    const samples = await scrape(address);
    expect(byRange(samples, "x_rmq_storage_items_total")).toEqual(contentRowsByRange(file));
    await waitFor(async () => (await gauge(address)).every((v) => v === 1), 20_000, "every queue active");
    expect(await gauge(address)).toHaveLength(160);
  }, 90_000);

  it("answers 421 to a Host it does not serve (DNS rebinding), 200 to its own and allowedHosts", async () => {
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      prefix: box.prefix(),
      storage: "sqlite::memory:",
      metrics: { port: 0, allowedHosts: ["metrics.example.org"] },
    });
    onTestFinished(() => server.stop());
    const { port } = server.metricsAddress() as Address;
    const url = `http://127.0.0.1:${port}/metrics`;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `metrics.example.org:${port}`]) {
      const { status, body } = await requestWithHost(url, host);
      expect(status, host).toBe(200);
      expect(body).toContain("x_rmq_storage_items_total");
    }
    for (const host of [`attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`]) {
      const { status, body } = await requestWithHost(url, host);
      expect(status, host).toBe(421);
      expect(body).not.toContain("x_rmq_storage");
    }
  });

  it("serve --metrics-host: the CLI server answers that name, and 421 to others", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await spawnServer([
      ...serveArgs(`sqlite:${file}`, prefix),
      "--metrics",
      "0",
      "--metrics-host",
      "metrics.example.org",
    ]);
    onTestFinished(() => {
      server.child.kill("SIGKILL");
    });
    const { port } = await metricsAddress(server);
    const url = `http://127.0.0.1:${port}/metrics`;
    expect((await requestWithHost(url, `metrics.example.org:${port}`)).status).toBe(200);
    expect((await requestWithHost(url, `attacker.example:${port}`)).status).toBe(421);
  }, 60_000);

  it("refuses a management URL that is not http(s), showing no password", async () => {
    await expect(
      RmqStorageServer.start({
        url: AMQP_URL,
        storage: "sqlite::memory:",
        metrics: { port: 0, management: "ftp://user:Sup3r-secret@host/" },
      }),
    ).rejects.toThrow(
      expect.objectContaining({
        code: "ERR_X_RMQ_STORAGE_INVALID_OPTION",
        message: expect.not.stringContaining("Sup3r-secret"),
      }),
    );
  });
});
