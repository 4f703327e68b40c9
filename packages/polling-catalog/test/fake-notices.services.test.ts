import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import amqp, { type ChannelModel } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PollingErmrestCatalog } from "../src/index.js";
import { redactUrl } from "../src/redact.js";
import { startFakeErmrest } from "../src/testing/index.js";
import { closedPort } from "./helpers.js";
import { raw } from "./http.js";

let connection: ChannelModel;
beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  connection = await amqp.connect(AMQP_URL);
});
afterAll(async () => {
  await connection?.close();
});

/** Listens on a fresh exchange; returns the received notices (body, routing key, properties). */
async function listen(exchange: string) {
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, "fanout", { durable: false, autoDelete: false });
  const { queue } = await channel.assertQueue("", { exclusive: true });
  await channel.bindQueue(queue, exchange, "");
  const received: Array<{ body: string; routingKey: string; headers: unknown }> = [];
  await channel.consume(
    queue,
    (message) => {
      if (message)
        received.push({
          body: message.content.toString(),
          routingKey: message.fields.routingKey,
          headers: message.properties.headers,
        });
    },
    { noAck: true },
  );
  return {
    received,
    close: async () => {
      await channel.deleteExchange(exchange).catch(() => {});
      await channel.close().catch(() => {});
    },
  };
}

/** Whether the broker has `exchange`, checked on a channel of its own. */
async function exchangeExists(exchange: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on("error", () => {});
  try {
    await channel.checkExchange(exchange);
    await channel.close();
    return true;
  } catch {
    return false;
  }
}

describe("fake ERMrest change notices", () => {
  it("deletes on close the exchange it declared, and leaves one that existed before", async () => {
    const mine = uniqueName("fake-own");
    const fake = await startFakeErmrest({
      tables: { "S:T": { key: ["id"] } },
      amqpUrl: AMQP_URL,
      noticeExchange: mine,
    });
    expect(await exchangeExists(mine)).toBe(true);
    await fake.restart(0); // a lost broker connection: close reconnects to clean up
    await fake.close();
    expect(await exchangeExists(mine)).toBe(false);

    const shared = uniqueName("fake-shared");
    const listener = await listen(shared);
    const guest = await startFakeErmrest({
      tables: { "S:T": { key: ["id"] } },
      amqpUrl: AMQP_URL,
      noticeExchange: shared,
    });
    await guest.close();
    expect(await exchangeExists(shared)).toBe(true);
    await listener.close();
  });

  it("publishes one 'change' per successful write, none for GETs and failures", async () => {
    const exchange = uniqueName("fake-notices");
    const listener = await listen(exchange);
    await using fake = await startFakeErmrest({
      tables: { "S:T": { key: ["id"], rows: [{ id: 1 }] } },
      amqpUrl: AMQP_URL,
      noticeExchange: exchange,
    });
    try {
      await raw(fake.url, "GET", "/entity/S:T");
      await raw(fake.url, "POST", "/entity/S:T", { body: [{ id: 1 }] });
      await raw(fake.url, "DELETE", "/entity/S:T/id=5");
      await raw(fake.url, "PUT", "/attributegroup/S:T/id;x", { body: [] }).catch(() => {});
      expect(listener.received).toEqual([]);
      await raw(fake.url, "POST", "/entity/S:T", { body: [{ id: 2 }] });
      await raw(fake.url, "PUT", "/entity/S:T", { body: [{ id: 3 }] });
      await raw(fake.url, "DELETE", "/entity/S:T/id=3");
      await waitFor(() => listener.received.length >= 3, 5_000, "three notices");
      // A quiet moment to catch extra notices.
      await raw(fake.url, "GET", "/entity/S:T");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(listener.received).toHaveLength(3);
      expect(listener.received[0]).toEqual({ body: "change", routingKey: "", headers: {} });
    } finally {
      await listener.close();
    }
  });

  it("declares the exchange as a non-durable, non-auto-deleted fanout, as ERMrest does", async () => {
    const exchange = uniqueName("fake-declare");
    await using _fake = await startFakeErmrest({ tables: {}, amqpUrl: AMQP_URL, noticeExchange: exchange });
    // The channel below deletes the exchange when done.
    const channel = await connection.createChannel();
    try {
      // Redeclaring with the same flags succeeds; other flags would close the channel with 406.
      await channel.assertExchange(exchange, "fanout", { durable: false, autoDelete: false });
      const other = await connection.createChannel();
      other.on("error", () => {});
      await expect(other.assertExchange(exchange, "fanout", { durable: true })).rejects.toThrow(
        /PRECONDITION/,
      );
    } finally {
      await channel.deleteExchange(exchange);
      await channel.close();
    }
  });

  it("tells the catalogs of this process its broker and exchange, for their defaults", async () => {
    const exchange = uniqueName("notices");
    await using fake = await startFakeErmrest({ tables: {}, amqpUrl: AMQP_URL, noticeExchange: exchange });
    const catalog = new PollingErmrestCatalog({ scheme: "http", server: fake.server, catalogId: 1 });
    const url = new URL(AMQP_URL);
    url.searchParams.set("heartbeat", "60");
    expect(catalog.amqpUrls).toEqual([redactUrl(url.href)]);
    expect(catalog.noticeExchange).toBe(exchange);
    const own = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: 1,
      noticeExchange: "x",
    });
    expect(own.noticeExchange).toBe("x");
  });

  it("rejects when the broker is unreachable", async () => {
    const port = await closedPort();
    await expect(startFakeErmrest({ tables: {}, amqpUrl: `amqp://127.0.0.1:${port}` })).rejects.toThrow();
  });

  it("reconnects on the next publish after losing the broker, and swallows a second failure", async () => {
    const exchange = uniqueName("fake-reconnect");
    const listener = await listen(exchange);
    const proxy = await startTcpProxy(AMQP_URL);
    await using fake = await startFakeErmrest({
      tables: { "S:T": { key: ["id"] } },
      amqpUrl: proxy.url,
      noticeExchange: exchange,
    });
    try {
      proxy.cut();
      proxy.refuse(true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await raw(fake.url, "POST", "/entity/S:T", { body: [{ id: 1 }] })).status).toBe(200);
      proxy.refuse(false);
      expect((await raw(fake.url, "POST", "/entity/S:T", { body: [{ id: 2 }] })).status).toBe(200);
      await waitFor(() => listener.received.length === 1, 5_000, "the notice after reconnecting");
      expect(fake.version).toBe(3);
    } finally {
      await listener.close();
      await proxy.close();
    }
  });
});
