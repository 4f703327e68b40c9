// NATS JetStream: the adapter against the machine's nats-server, and against a private one for the broker
// restart.
import { type JetStreamClient, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../src/index.js";
import { natsStream } from "../src/nats.js";
import { runScenario, type ScenarioEngine } from "./engine-scenario.js";
import { expectCode } from "./helpers.js";
import { publishNatsMessages } from "./indexed-records.js";
import { type PrivateServer, startPrivateServer } from "./private-server.js";

const NATS_SERVER = process.env.NATS_SERVER ?? "127.0.0.1:4222";
// 10 000 records through a checkpoint, with restarts, on a shared and loaded machine: generous deadlines.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const COUNT = 10_000;
const created: { server: string; stream: string }[] = [];

const open = (server: string) =>
  connect({ servers: server, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

/** A fresh file-backed stream of `count` messages `{ i }` on its own subject, deleted after the file. */
async function produce(server: string, count: number): Promise<{ stream: string; subject: string }> {
  const stream = uniqueName("orders").toUpperCase();
  const subject = `${stream.toLowerCase()}.created`;
  created.push({ server, stream });
  const nc = await open(server);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [subject], storage: "file" });
  const js = jetstream(nc);
  await publishNatsMessages(js, subject, count);
  await nc.close();
  return { stream, subject };
}

function engine(
  server: string,
  stream: string,
  restart?: () => Promise<void>,
): ScenarioEngine<JsMsg, number> {
  return {
    async open() {
      const nc = await open(server);
      const orders = natsStream({ js: jetstream(nc), stream, retryMaxMs: 500 });
      return {
        stream: orders,
        async close() {
          await orders.close();
          await nc.close();
        },
      };
    },
    indexOf: (message) => (message.json() as { i: number }).i,
    restart,
  };
}

const scenario = { count: COUNT, stallAt: 5_000, watchMs: 1_000 };

beforeAll(() => requireService("NATS", `nats://${NATS_SERVER}`));
afterAll(async () => {
  for (const { server, stream } of created.filter((entry) => entry.server === NATS_SERVER)) {
    const nc = await open(server);
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => {});
    await nc.close();
  }
});

describe("natsStream on NATS JetStream", () => {
  it("stops the consumer during a downtime and replays from the checkpointed sequence", async () => {
    const { stream } = await produce(NATS_SERVER, COUNT);
    await runScenario(engine(NATS_SERVER, stream), "plain", scenario);
  });

  it("recovers the same way after a process restart during the downtime (SqliteCache)", async () => {
    const { stream } = await produce(NATS_SERVER, COUNT);
    await runScenario(engine(NATS_SERVER, stream), "process-restart", scenario);
  });

  it("starts at the first message, a sequence or a time; seeks; refuses bad options", async () => {
    const { stream } = await produce(NATS_SERVER, 10);
    const nc = await open(NATS_SERVER);
    const js: JetStreamClient = jetstream(nc);
    const indices = async (from: "first" | { seq: number } | { time: Date }, take: number) => {
      const orders = natsStream({ js, stream, from });
      const seen: number[] = [];
      for await (const message of orders) {
        seen.push((message.json() as { i: number }).i);
        if (seen.length === take) break;
      }
      return seen;
    };
    try {
      expect(await indices("first", 3)).toEqual([0, 1, 2]);
      expect(await indices({ seq: 5 }, 2)).toEqual([4, 5]);
      expect(await indices({ time: new Date(0) }, 1)).toEqual([0]);
      const orders = natsStream({ js, stream });
      expect((await orders.next()).value?.seq).toBe(1);
      await orders.seek(9);
      expect(orders.position).toBeUndefined();
      expect((await orders.next()).value?.seq).toBe(9);
      expect(orders.position).toBe(9);
      await expectCode(() => orders.seek(0), ErrorCode.INVALID_OPTION);
      await orders.close();
      expect(await orders.next()).toEqual({ done: true, value: undefined });
      const missing = natsStream({ js, stream: "NO_SUCH_STREAM_HERE" });
      await expectCode(() => missing.next(), ErrorCode.NOT_A_STREAM);
      await missing.close();
      await expectCode(() => natsStream({ js, stream: "" }), ErrorCode.INVALID_OPTION);
      await expectCode(() => natsStream({ js: {} as never, stream }), ErrorCode.INVALID_OPTION);
      await expectCode(() => natsStream({ js, stream, from: { seq: 0 } }), ErrorCode.INVALID_OPTION);
    } finally {
      await nc.close();
    }
  });

  it("holds at most twice batchSize while the loop does not take more, and skips none", async () => {
    const { stream } = await produce(NATS_SERVER, 200);
    const nc = await open(NATS_SERVER);
    try {
      await using orders = natsStream({ js: jetstream(nc), stream, batchSize: 10 });
      expect((await orders.next()).value?.seq).toBe(1);
      await vi.waitFor(() => expect(orders.deliveries).toBeGreaterThanOrEqual(10));
      // a loop that takes nothing more: the client asks for nothing more either
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(orders.deliveries).toBeLessThanOrEqual(20);
      const seqs = [1];
      for await (const message of orders) if (seqs.push(message.seq) === 200) break;
      expect(seqs).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
    } finally {
      await nc.close();
    }
  });

  it("leaves no consumer on the server after pauses, seeks and close", async () => {
    const { stream } = await produce(NATS_SERVER, 20);
    const nc = await open(NATS_SERVER);
    const jsm = await jetstreamManager(nc);
    const consumers = async () => (await jsm.consumers.list(stream).next()).length;
    try {
      expect(await consumers()).toBe(0);
      const orders = natsStream({ js: jetstream(nc), stream });
      expect((await orders.next()).value?.seq).toBe(1);
      expect(await consumers()).toBe(1);
      for (let cycle = 0; cycle < 5; cycle++) {
        await orders.pause();
        expect(await consumers()).toBe(0);
        await orders.seek(2 + cycle);
        orders.resume();
        expect((await orders.next()).value?.seq).toBe(2 + cycle);
        expect(await consumers()).toBe(1);
      }
      await orders.close();
      expect(await consumers()).toBe(0);
    } finally {
      await nc.close();
    }
  });
});

describe("natsStream on a private nats-server that restarts", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    server = await startPrivateServer("nats-server", "nats-server", (port, dir) => [
      "-js",
      "-a",
      "127.0.0.1",
      "-p",
      String(port),
      "-sd",
      dir,
    ]);
  }, 60_000);
  afterAll(() => server?.stop());

  it("reads on across a restart in the middle of the stream: none skipped, none twice", async () => {
    const address = `127.0.0.1:${server.port}`;
    const { stream: name } = await produce(address, 3_000);
    const nc = await open(address);
    const stream = natsStream({ js: jetstream(nc), stream: name, batchSize: 100, retryMaxMs: 200 });
    const seen: number[] = [];
    try {
      for await (const message of stream) {
        seen.push((message.json() as { i: number }).i);
        if (seen.length === 1_000) await server.restart();
        if (seen.length === 3_000) break;
      }
    } finally {
      await stream.close();
      await nc.close();
    }
    expect(seen).toEqual(Array.from({ length: 3_000 }, (_, index) => index));
  }, 60_000);

  it("keeps the consumer closed across the restart and replays from the checkpointed sequence", async () => {
    const address = `127.0.0.1:${server.port}`;
    const { stream } = await produce(address, COUNT);
    await runScenario(
      engine(address, stream, () => server.restart()),
      "broker-restart",
      scenario,
    );
  });
});
