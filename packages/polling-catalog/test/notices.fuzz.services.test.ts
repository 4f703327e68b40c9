import { checkProperty } from "@x/test-support/fuzz";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import amqp, { type Channel, type ChannelModel } from "amqplib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AmqpEvent, PollingErmrestCatalog } from "../src/index.js";
import { startFakeErmrest } from "../src/testing/index.js";
import { deleteExchange } from "./helpers.js";

let connection: ChannelModel;
let channel: Channel;
beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  connection = await amqp.connect(AMQP_URL);
  channel = await connection.createChannel();
});
afterAll(async () => {
  await connection?.close();
});

const text = fc.string({ unit: "binary", maxLength: 40 });

/** Messages as a broken or hostile publisher sends them on the notice exchange: any body, any properties. */
const message = fc.record({
  body: fc.oneof(
    fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b)),
    fc.constantFrom("change", "", "{", "null", "\0").map((s) => Buffer.from(s)),
    fc.integer({ min: 100_000, max: 1_000_000 }).map((n) => Buffer.alloc(n, 0xff)),
  ),
  routingKey: fc.oneof(fc.constant(""), fc.string({ maxLength: 30 })),
  properties: fc.record(
    {
      contentType: text,
      contentEncoding: text,
      type: text,
      messageId: text,
      correlationId: text,
      priority: fc.integer({ min: 0, max: 255 }),
      headers: fc.dictionary(
        fc.string({ maxLength: 10 }),
        fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
      ),
    },
    { requiredKeys: [] },
  ),
});

describe("change notices under fuzzing (RabbitMQ)", () => {
  it("every message on the notice exchange is a notice that wakes the agent, whatever its body and properties", async () => {
    const exchange = uniqueName("notice-fuzz");
    await using fake = await startFakeErmrest({ tables: { "S:T": { key: ["id"] } } });
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      amqpServer: AMQP_URL,
      noticeExchange: exchange,
    });
    const amqpEvents: AmqpEvent[] = [];
    catalog.on("amqp", (event) => amqpEvents.push(event));
    let drains = 0;
    const controller = new AbortController();
    const polling = catalog.blockingPoll(
      () => {
        drains++;
        return false;
      },
      { pollingMs: 600_000, coalesceMs: 0, maxCoalesceMs: 0, signal: controller.signal },
    );
    try {
      await waitFor(() => amqpEvents.length > 0, 20_000, "the bind");
      expect(amqpEvents[0]?.state).toBe("up");
      await checkProperty(
        "polling-catalog: AMQP notice",
        fc.asyncProperty(message, async ({ body, routingKey, properties }) => {
          const before = drains;
          channel.publish(exchange, routingKey, body, properties);
          await waitFor(() => drains > before, 20_000, "a drain woken by the notice");
        }),
        0.1,
      );
      expect(amqpEvents.map((event) => event.state)).toEqual(["up"]);
    } finally {
      controller.abort();
      await polling;
      await deleteExchange(exchange);
    }
  }, 600_000);
});
