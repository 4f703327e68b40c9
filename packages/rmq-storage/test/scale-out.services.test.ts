import { once } from "node:events";
import { AMQP_URL, PG_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStorage, RmqStorageClient } from "../src/index.js";
import { activeConsumers } from "./broker.js";
import { apply, type Call, dump, generateFixture, randomId } from "./fixture.js";
import { directDump, type ServerChild, sandbox, serveArgs, spawnServer } from "./stack.js";

const box = sandbox("scale");
const schema = uniqueName("scale");
beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  await requireService("PostgreSQL", PG_URL);
}, 4_000);
afterAll(async () => {
  await box.cleanup();
  const client = new pg.Client(PG_URL);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

const LOW = [..."01234567"];
/** 20 000 random contents over every range, with random dates. */
const spreadContentCall = (): Call => [
  "contentAdd",
  new Map(Array.from({ length: 20_000 }, () => [randomId(), BigInt(Math.floor(Math.random() * 1e15))])),
];
const pidOf = (server: ServerChild) => ` pid ${server.child.pid} `;

describe("scale-out: two server groups with disjoint ranges, each the standby of the other", () => {
  it("spreads the ranges over two hosts; losing one moves its ranges to the other, and no write is lost", async () => {
    const prefix = box.prefix();
    const url = new URL(PG_URL);
    url.searchParams.set("schema", schema);
    const spec = url.toString();
    const serve = (...extra: string[]) =>
      spawnServer([...serveArgs(spec, prefix), "--log-level", "info", ...extra], { waitForReady: false });
    // "Host A" serves 0-7 and stands by for 8-f; "host B" the reverse. The standbys start first: they
    // must not take the queues before the active servers come (RabbitMQ gives a single-active-consumer
    // queue to the first consumer registered, and ignores consumer priorities there before 4.x).
    const standbyA = await serve("--ranges", "8-f", "--standby", "60");
    const standbyB = await serve("--ranges", "0-7", "--standby", "60");
    const activeA = await serve("--ranges", "0-7");
    const activeB = await serve("--ranges", "8-f");
    const all = [standbyA, standbyB, activeA, activeB];
    try {
      await Promise.all(all.map((server) => server.ready()));
      const before = await activeConsumers(prefix);
      expect(before.size).toBe(160);
      for (const [queue, tag] of before)
        expect(tag).toContain(pidOf(LOW.includes(queue.at(-1) as string) ? activeA : activeB));

      const local = await openPostgresStorage(spec, { poolSize: 2 });
      const client = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix });
      const calls = [...Array.from({ length: 6 }, spreadContentCall), ...generateFixture({ seed: 17 }).calls];
      const pending = Promise.all(calls.map((call) => apply(client, call)));
      const counter = new pg.Client(PG_URL);
      await counter.connect();
      const stored = async () =>
        Number((await counter.query(`SELECT count(*) AS n FROM ${schema}.content`)).rows[0].n);
      await waitFor(async () => (await stored()) > 10_000, 60_000, "part of the load");
      // Host A is lost: both of its processes die at once, with unacknowledged batches in flight.
      activeA.child.kill("SIGKILL");
      standbyA.child.kill("SIGKILL");
      const lost = performance.now();
      await Promise.all([once(activeA.child, "exit"), once(standbyA.child, "exit")]);
      expect(await stored()).toBeLessThan(120_000);
      await waitFor(
        async () => {
          const now = await activeConsumers(prefix);
          return [...now].every(([queue, tag]) =>
            tag.includes(pidOf(LOW.includes(queue.at(-1) as string) ? standbyB : activeB)),
          );
        },
        30_000,
        "host B's standby taking over ranges 0-7",
      );
      const takeoverMs = performance.now() - lost;
      expect(takeoverMs).toBeLessThan(5_000);
      expect((await pending).every(Boolean)).toBe(true);
      await counter.end();
      await client.close();
      expect(await dump(local)).toEqual(await directDump(calls));
      await local.close();
    } finally {
      for (const server of all) if (server.child.exitCode === null) server.child.kill("SIGTERM");
      await Promise.all(
        all.map((server) =>
          server.child.exitCode === null && server.child.signalCode === null
            ? once(server.child, "exit")
            : null,
        ),
      );
    }
    expect(activeB.child.exitCode).toBe(0);
    expect(standbyB.child.exitCode).toBe(0);
  }, 180_000);
});
