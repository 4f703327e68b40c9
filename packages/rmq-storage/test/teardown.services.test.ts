import { XError } from "@x/core";
import { AMQP_URL, requireService } from "@x/test-support/services";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { deleteTopology, openSqliteStorage, RmqStorageClient, RmqStorageServer } from "../src/index.js";
import { brokerNames, queueDepth } from "./broker.js";
import { sandbox } from "./stack.js";

const box = sandbox("teardown");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

/** A plain prefix (no trailing separator), registered with the sandbox for cleanup. */
const plainPrefix = () => box.prefix().slice(0, -1);

describe("deleteTopology", () => {
  it("deletes exactly the 165 queues and 10 exchanges of a prefix, and is idempotent", async () => {
    const prefix = plainPrefix();
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    await server.stop();
    // Something of someone else's under the same prefix stays.
    const connection = await amqp.connect(AMQP_URL);
    onTestFinished(() => connection.close());
    const channel = await connection.createChannel();
    await channel.assertQueue(`${prefix}.theirs`, { durable: false });
    onTestFinished(() => channel.deleteQueue(`${prefix}.theirs`).then(() => {}));

    const before = await brokerNames(`${prefix}.`);
    expect([before.queues.length, before.exchanges.length]).toEqual([166, 10]);
    const deleted = await deleteTopology({ url: AMQP_URL, prefix });
    expect([deleted.queues.length, deleted.exchanges.length]).toEqual([165, 10]);
    expect(deleted.queues).toContain(`${prefix}.content_add.unknown.f`);
    expect(deleted.exchanges).toEqual(
      expect.arrayContaining([`${prefix}.location`, `${prefix}.origin.dead`]),
    );
    expect(await brokerNames(`${prefix}.`)).toEqual({ queues: [`${prefix}.theirs`], exchanges: [] });
    expect(await deleteTopology({ url: AMQP_URL, prefix })).toEqual({ queues: [], exchanges: [] });
  }, 60_000);

  it("refuses, deleting nothing, while a queue has a consumer or holds messages; force deletes anyway", async () => {
    const prefix = plainPrefix();
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    const inUse = await deleteTopology({ url: AMQP_URL, prefix }).catch((e: unknown) => e);
    expect(XError.is(inUse, "ERR_X_RMQ_STORAGE_IN_USE"), String(inUse)).toBe(true);
    expect((inUse as Error).message).toContain(`${prefix}.content_add.unknown.0`);
    await server.stop();

    // A message waiting for a server is a write not yet made: refused too.
    const connection = await amqp.connect(AMQP_URL);
    onTestFinished(() => connection.close());
    const channel = await connection.createChannel();
    channel.publish(`${prefix}.content`, "content_add.unknown.3", Buffer.from("{}"));
    await channel.close();
    await expect.poll(async () => (await queueDepth(`${prefix}.content_add.unknown.3`))?.ready).toBe(1);
    const waiting = await deleteTopology({ url: AMQP_URL, prefix }).catch((e: unknown) => e);
    expect(XError.is(waiting, "ERR_X_RMQ_STORAGE_IN_USE"), String(waiting)).toBe(true);
    expect((await brokerNames(`${prefix}.`)).queues).toHaveLength(165);

    const forced = await deleteTopology({ url: AMQP_URL, prefix, force: true });
    expect(forced.queues).toHaveLength(165);
    expect(await brokerNames(`${prefix}.`)).toEqual({ queues: [], exchanges: [] });
  }, 60_000);

  it("rejects bad options before any I/O", async () => {
    for (const [options, name] of [
      [{ url: "http://x" }, "url"],
      [{ url: AMQP_URL, prefix: "a b" }, "prefix"],
      [{ url: AMQP_URL, force: "yes" }, "force"],
    ] as const) {
      const error = await deleteTopology(options as never).catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION"), String(error)).toBe(true);
      expect((error as Error).message).toContain(name);
    }
  });
});

describe("RmqStorageClient.waitForServer", () => {
  it("resolves once a server consumes every queue, not before", async () => {
    const prefix = box.prefix();
    const local = await openSqliteStorage(":memory:");
    onTestFinished(() => local.close());
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix });
    onTestFinished(() => client.close());
    // A server of half the ranges is not enough.
    const half = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
      ranges: [..."01234567"],
    });
    onTestFinished(() => half.stop());
    const early = await client.waitForServer({ timeoutMs: 300 }).catch((e: unknown) => e);
    expect(XError.is(early, "ERR_X_RMQ_STORAGE_NO_SERVER"), String(early)).toBe(true);
    expect((early as Error).message).toMatch(/\.8$|\.8 /);

    let resolved = false;
    const waiting = client.waitForServer({ timeoutMs: 60_000 }).then(() => {
      resolved = true;
    });
    const rest = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
      ranges: [..."89abcdef"],
    });
    onTestFinished(() => rest.stop());
    await waiting;
    expect(resolved).toBe(true);
    expect(await client.contentAdd(new Map([["f".repeat(40), 1n]]))).toBe(true);
  }, 60_000);

  it("rejects with the signal's reason, after close(), and for a bad option", async () => {
    const local = await openSqliteStorage(":memory:");
    onTestFinished(() => local.close());
    const client = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix: box.prefix() });
    const controller = new AbortController();
    const aborted = client.waitForServer({ signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error("enough"));
    expect(((await aborted) as Error).message).toBe("enough");
    const bad = await client.waitForServer({ timeoutMs: -1 }).catch((e: unknown) => e);
    expect(XError.is(bad, "ERR_X_RMQ_STORAGE_INVALID_OPTION")).toBe(true);
    const pending = client.waitForServer({ timeoutMs: 60_000 }).catch((e: unknown) => e);
    await client.close();
    expect(XError.is(await pending, "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
    const after = await client.waitForServer().catch((e: unknown) => e);
    expect(XError.is(after, "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
  }, 30_000);
});
