import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErmrestCatalog, PollingErmrestCatalog, type WakeReason } from "@x/polling-catalog";
import { startFakeErmrest } from "@x/polling-catalog/testing";
import {
  deleteTopology,
  openSqliteStorage,
  RelationType,
  RmqStorageClient,
  RmqStorageServer,
} from "@x/rmq-storage";
import { AMQP_URL } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { rabbitmqctl, rabbitmqctlAvailable, stopBroker } from "./rabbitmqctl.js";

const hex = (n: number, width = 40) => n.toString(16).padStart(width, "0");

/** 100 000 items in 100 calls: 90 content calls of 1 000 ids, then 10 relation calls of 1 000 rows. */
function writeCalls(): Array<(storage: Writer) => Promise<unknown>> {
  const calls: Array<(storage: Writer) => Promise<unknown>> = [];
  for (let c = 0; c < 90; c++) {
    const batch = new Map<string, bigint>();
    for (let i = 0; i < 1_000; i++)
      batch.set(hex(c * 1_000 + i), 1_700_000_000_000_000n + BigInt(c * 1_000 + i));
    calls.push((storage) => storage.contentAdd(batch));
  }
  for (let c = 0; c < 10; c++) {
    const batch = new Map<string, Array<{ dst: string; path: Uint8Array }>>();
    for (let i = 0; i < 100; i++)
      batch.set(
        hex(c * 100 + i),
        Array.from({ length: 10 }, (_, j) => ({
          dst: hex(0xd000000 + c * 100 + i),
          path: Buffer.from(`f/${j}`),
        })),
      );
    calls.push((storage) => storage.relationAdd(RelationType.CNT_IN_DIR, batch));
  }
  return calls;
}

/** What a storage and a client share: the write methods the calls use (a client's resolve to `boolean`). */
interface Writer {
  contentAdd(data: Map<string, bigint>): Promise<unknown>;
  relationAdd(
    relation: RelationType,
    data: Map<string, Iterable<{ dst: string; path: Uint8Array }>>,
  ): Promise<unknown>;
}

/** The stored rows, by value (ids of rows are the storage's own and may differ). */
function dump(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    return {
      content: db.prepare("SELECT hex(sha1) AS sha1, date FROM content ORDER BY sha1").all(),
      relations: db
        .prepare(
          `SELECT hex(c.sha1) AS src, hex(d.sha1) AS dst, hex(l.path) AS path FROM content_in_directory r
           JOIN content c ON c.id = r.src JOIN directory d ON d.id = r.dst JOIN location l ON l.id = r.loc
           ORDER BY src, dst, path`,
        )
        .all(),
    };
  } finally {
    db.close();
  }
}

const available = rabbitmqctlAvailable();
if (!available)
  console.warn("broker restart test skipped: rabbitmqctl is not available or cannot reach the broker");

describe("a real RabbitMQ restart (rabbitmqctl stop_app / start_app)", () => {
  it.skipIf(!available)(
    "loses and doubles no write of a 100 000-item load, and puts two agents back on notices",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "x-broker-restart-"));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const prefix = uniqueName("restart");

      // The catalog side: a fake ERMrest publishing notices, two agents woken only by them.
      const noticeExchange = `${prefix}.ermrest_changes`;
      const fake = await startFakeErmrest({
        tables: { "S:Job": { key: ["id"], columns: ["state"], types: { id: "int4" } } },
        amqpUrl: AMQP_URL,
        noticeExchange,
      });
      onTestFinished(() => fake.close());
      const address = { scheme: "http", server: fake.server, catalogId: fake.catalogId } as const;
      const controller = new AbortController();
      const agents = [0, 1].map(() => {
        const agent = new PollingErmrestCatalog({ ...address, amqpServer: AMQP_URL, noticeExchange });
        const amqp: string[] = [];
        const wakes: WakeReason[] = [];
        agent.on("amqp", (event) => amqp.push(event.state));
        agent.on("wake", ({ reason }) => wakes.push(reason));
        const running = agent.blockingPoll(async () => false, {
          pollingMs: 600_000,
          signal: controller.signal,
        });
        return { amqp, wakes, running };
      });
      onTestFinished(async () => {
        controller.abort();
        await Promise.allSettled(agents.map((agent) => agent.running));
      });
      await waitFor(() => agents.every((agent) => agent.amqp.includes("up")), 30_000, "both agents bound");

      // The storage side: the same calls written directly and through the broker.
      const calls = writeCalls();
      const direct = await openSqliteStorage(join(dir, "direct.db"));
      for (const call of calls) await call(direct);
      await direct.close();
      const through = join(dir, "through.db");
      const server = await RmqStorageServer.start({ url: AMQP_URL, prefix, storage: `sqlite:${through}` });
      onTestFinished(() => deleteTopology({ url: AMQP_URL, prefix, force: true }).then(() => {}));
      onTestFinished(() => server.stop());
      const reads = await openSqliteStorage(through);
      onTestFinished(() => reads.close());
      const client = await RmqStorageClient.connect({ url: AMQP_URL, prefix, storage: reads });
      onTestFinished(() => client.close());

      let written = 0;
      const writing = (async () => {
        for (const call of calls) {
          // A write resolves false when it could not be confirmed; every write is idempotent, so send it again.
          while ((await call(client)) !== true) await new Promise((resolve) => setTimeout(resolve, 200));
          written++;
        }
      })();

      let restart: (() => Promise<void>) | undefined;
      try {
        await waitFor(() => written >= 10, 120_000, "the first tenth of the load");
        restart = await stopBroker();
        await waitFor(
          () => agents.every((agent) => agent.amqp.at(-1) === "down"),
          30_000,
          "both agents down",
        );
        await restart();
        await writing;
      } finally {
        await restart?.();
        if (!restart) await rabbitmqctl("start_app").catch(() => {});
      }
      expect(written).toBe(calls.length);
      expect(dump(through)).toEqual(dump(join(dir, "direct.db")));

      // Both agents bind again by themselves and wake on a change notice, not on polling.
      await waitFor(
        () => agents.every((agent) => agent.amqp.at(-1) === "up"),
        60_000,
        "both agents bound again",
      );
      const before = agents.map((agent) => agent.wakes.filter((reason) => reason === "notice").length);
      await new ErmrestCatalog(address).post("/entity/S:Job", { json: [{ id: 1, state: "queued" }] });
      await waitFor(
        () =>
          agents.every((agent, i) => agent.wakes.filter((reason) => reason === "notice").length > before[i]!),
        10_000,
        "a notice wake on both agents",
      );
    },
  );
});
