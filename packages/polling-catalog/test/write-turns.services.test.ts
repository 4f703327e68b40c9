import type { IncomingMessage, ServerResponse } from "node:http";
import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import amqp, { type ChannelModel } from "amqplib";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PollingErmrestCatalog } from "../src/index.js";
import { turnQueueName, WriteTurns } from "../src/write-turns.js";
import { startStubServer } from "./stub-server.js";

const silent = recordingLogger().logger;
let admin: ChannelModel;

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  admin = await amqp.connect(AMQP_URL);
});
afterAll(async () => {
  await admin?.close();
});

/** An AMQP connection closed when the test ends (unless the test closed it). */
async function connect(): Promise<ChannelModel> {
  const connection = await amqp.connect(AMQP_URL, { noDelay: true });
  connection.on("error", () => {});
  onTestFinished(() => connection.close().catch(() => {}));
  return connection;
}

/** A fresh turn queue name, deleted when the test ends. */
function freshQueue(): string {
  const queue = uniqueName("x-turns-test");
  onTestFinished(async () => {
    const channel = await admin.createChannel();
    await channel.deleteQueue(queue).catch(() => {});
    await channel.close().catch(() => {});
  });
  return queue;
}

/** Whether `promise` has settled after the broker had time to deliver (two round trips through it). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const channel = await admin.createChannel();
  await channel.checkExchange("amq.direct");
  await channel.checkExchange("amq.direct");
  await channel.close();
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("WriteTurns", () => {
  it("gives one client at a time the turn; the next one gets it when the turn ends", async () => {
    const queue = freshQueue();
    const first = new WriteTurns(await connect(), silent);
    const second = new WriteTurns(await connect(), silent);
    const endFirst = await first.take(queue);
    expect(endFirst).toBeTypeOf("function");
    const waiting = second.take(queue);
    expect(await settled(waiting)).toBe(false);
    endFirst?.();
    const endSecond = await waiting;
    expect(endSecond).toBeTypeOf("function");
    endSecond?.();
  });

  it("hands the turns round in the order the clients asked", async () => {
    const queue = freshQueue();
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => new WriteTurns(await connect(), silent)),
    );
    const endFirst = await (clients[0] as WriteTurns).take(queue);
    const order: number[] = [];
    const waits: Array<Promise<void>> = [];
    for (const index of [1, 2, 3]) {
      // each asks once the one before it is queued behind the holder
      const asked = (clients[index] as WriteTurns).take(queue);
      waits.push(
        asked.then((end) => {
          order.push(index);
          end?.();
        }),
      );
      expect(await settled(asked)).toBe(false);
    }
    endFirst?.();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3]);
  });

  it("passes the turn on when its holder's connection dies", async () => {
    const queue = freshQueue();
    const holderConnection = await connect();
    const holder = new WriteTurns(holderConnection, silent);
    const next = new WriteTurns(await connect(), silent);
    expect(await holder.take(queue)).toBeTypeOf("function");
    const waiting = next.take(queue);
    expect(await settled(waiting)).toBe(false);
    await holderConnection.close(); // a SIGKILLed agent's connection ends the same way
    const end = await waiting;
    expect(end).toBeTypeOf("function");
    end?.();
  });

  it("gives up a wait on abort, rejecting with the reason, without holding up the next client", async () => {
    const queue = freshQueue();
    const holder = new WriteTurns(await connect(), silent);
    const quitter = new WriteTurns(await connect(), silent);
    const next = new WriteTurns(await connect(), silent);
    const endHolder = await holder.take(queue);
    const controller = new AbortController();
    const quitting = quitter.take(queue, controller.signal);
    expect(await settled(quitting)).toBe(false);
    const waiting = next.take(queue);
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(quitting).rejects.toBe(reason);
    endHolder?.();
    const end = await waiting;
    expect(end).toBeTypeOf("function");
    end?.();
  });

  it("lets the write go at once, with one warning, when the broker refuses the queue", async () => {
    const queue = freshQueue();
    // a queue of that name with other arguments: declaring it as a turn queue fails (PRECONDITION_FAILED)
    const channel = await admin.createChannel();
    await channel.assertQueue(queue, { durable: false, autoDelete: false });
    await channel.close();
    const { logger, records } = recordingLogger();
    const turns = new WriteTurns(await connect(), logger);
    expect(await turns.take(queue)).toBeUndefined();
    expect(await turns.take(queue)).toBeUndefined();
    const warnings = records.filter((record) => record.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain("Write turns unavailable");
  });

  it("names a turn queue after the catalog and the table, hashing what is too long", () => {
    const url = "https://example.org/ermrest/catalog/1";
    expect(turnQueueName(url, "S:Job")).toBe(`x-polling-catalog.write-turns ${url} S:Job`);
    const long = turnQueueName(url, "S:".padEnd(300, "x"));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(255);
    expect(long).not.toBe(turnQueueName(url, "S:".padEnd(301, "x")));
  });
});

describe('writePacing: "turns" in blockingPoll', () => {
  it("stops within a second of the abort while waiting for a turn", async () => {
    let puts = 0;
    const stub = await startStubServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      if (request.method === "PUT") puts++;
      response.writeHead(200, { "Content-Type": "application/json" }).end("[]");
    });
    onTestFinished(stub.close);
    const noticeExchange = uniqueName("pc-turns");
    onTestFinished(async () => {
      const channel = await admin.createChannel();
      await channel.deleteExchange(noticeExchange).catch(() => {});
      await channel.close().catch(() => {});
    });
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: stub.server,
      catalogId: 1,
      amqpServer: AMQP_URL,
      noticeExchange,
    });
    // another agent holds the table's turn for ever
    const holder = new WriteTurns(await connect(), silent);
    const tableQueue = turnQueueName(catalog.url, "S:Job");
    onTestFinished(async () => {
      const channel = await admin.createChannel();
      await channel.deleteQueue(tableQueue).catch(() => {});
      await channel.close().catch(() => {});
    });
    expect(await holder.take(tableQueue)).toBeTypeOf("function");
    let bound = false;
    catalog.on("amqp", (event) => {
      if (event.state === "up") bound = true;
    });
    let attempts = 0;
    const controller = new AbortController();
    const done = catalog.blockingPoll(
      async () => {
        if (!bound) return true; // the turns come with the binding
        attempts++;
        await catalog.put("/attributegroup/S:Job/id;state", { json: [] });
        return true;
      },
      { signal: controller.signal, pollingMs: 50 },
    );
    await waitFor(() => attempts >= 1, 20_000, "a write waiting for its turn");
    // the broker has had time to hand a free turn over: the write still waits
    const channel = await admin.createChannel();
    await waitFor(
      async () => (await channel.checkQueue(tableQueue)).consumerCount >= 2,
      10_000,
      "the write queued for the turn",
    );
    await channel.close();
    expect(puts).toBe(0);
    const abortedAt = performance.now();
    controller.abort();
    await done;
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    expect(puts).toBe(0);
  });
});
