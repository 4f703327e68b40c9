import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { waitFor } from "@x/test-support/wait-for";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntityType, openSqliteStorage, RmqStorageClient, RmqStorageServer } from "../src/index.js";
import { queueDepth } from "./broker.js";
import { apply, type Call, generateFixture } from "./fixture.js";
import { bigContentCall, directDump, fileDump, reader, sandbox, spawnServer } from "./stack.js";

const box = sandbox("rel");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

describe("reliability: after each failure, the stored data equals direct writes of the same calls", () => {
  it("survives SIGKILL of the server process in the middle of a large write, once a server restarts", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const args = [
      "--amqp",
      AMQP_URL,
      "--storage",
      `sqlite:${file}`,
      "--prefix",
      prefix,
      "--log-level",
      "info",
    ];
    const first = await spawnServer(args);
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: local,
      prefix,
      waitMinMs: 60_000,
    });
    // Big enough that the kill lands mid-write even with merges of 10 000 items per commit.
    const big = bigContentCall(200_000);
    const fixture = generateFixture({ seed: 11 });
    let settled = false;
    const pending = apply(client, big).then((ok) => {
      settled = true;
      return ok;
    });
    // Kill the server once part of the write is committed, but not all of it.
    await waitFor(
      async () => (await local.entityGetAll(EntityType.CONTENT)).size > 2_000,
      30_000,
      "part of the write",
    );
    first.child.kill("SIGKILL");
    await once(first.child, "exit");
    const committed = (await local.entityGetAll(EntityType.CONTENT)).size;
    expect(committed).toBeLessThan(200_000);
    expect(settled).toBe(false);
    const second = await spawnServer(args);
    for (const call of fixture.calls) expect(await apply(client, call)).toBe(true);
    expect(await pending).toBe(true);
    await client.close();
    await local.close();
    second.child.kill("SIGTERM");
    const [code] = await once(second.child, "exit");
    expect(code).toBe(0);
    expect(second.stderr()).toContain("stopped");
    expect(await fileDump(file)).toEqual(await directDump([big, ...fixture.calls]));
  }, 90_000);

  it("survives the loss of the broker connection of both the client and the server", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const proxy = await startTcpProxy(AMQP_URL);
    const server = await RmqStorageServer.start({
      url: proxy.url,
      storage: () => openSqliteStorage(file),
      prefix,
    });
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: proxy.url,
      storage: local,
      prefix,
      waitMinMs: 60_000,
    });
    const reconnects = { server: 0, client: 0 };
    server.on("reconnect", () => reconnects.server++);
    client.on("reconnect", () => reconnects.client++);
    const big = bigContentCall(20_000);
    const fixture = generateFixture({ seed: 12 });
    const pending = apply(client, big);
    await waitFor(
      async () => (await local.entityGetAll(EntityType.CONTENT)).size > 1_000,
      30_000,
      "part of the write",
    );
    proxy.cut();
    const results = await Promise.all(fixture.calls.map((call) => apply(client, call)));
    expect(results.every(Boolean)).toBe(true);
    expect(await pending).toBe(true);
    expect(reconnects.server).toBeGreaterThan(0);
    expect(reconnects.client).toBeGreaterThan(0);
    await client.close();
    await server.stop();
    await local.close();
    await proxy.close();
    expect(await fileDump(file)).toEqual(await directDump([big, ...fixture.calls]));
  }, 90_000);

  it("dead-letters a malformed message published by hand, answers it, and keeps serving", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(file),
      prefix,
    });
    const deadLetters: string[] = [];
    server.on("dead-letter", ({ reason }) => deadLetters.push(reason));
    const connection = await amqp.connect(AMQP_URL);
    const channel = await connection.createChannel();
    const { queue: replyTo } = await channel.assertQueue("", { exclusive: true });
    const replies: unknown[] = [];
    await channel.consume(replyTo, (m) => m && replies.push(JSON.parse(m.content.toString())), {
      noAck: true,
    });
    const publish = (key: string, body: string, props: amqp.Options.Publish) =>
      channel.publish(`${prefix}content`, key, Buffer.from(body), { persistent: true, ...props });
    const id = `a${"0".repeat(39)}`;
    const full = (messageId: string) => ({ correlationId: randomUUID(), messageId, replyTo });
    publish("content_add.unknown.a", "not json", full("m1"));
    publish(
      "content_add.unknown.a",
      JSON.stringify({ v: 1, items: [[`b${"0".repeat(39)}`, "5"]] }),
      full("m2"),
    );
    publish("content_add.unknown.a", JSON.stringify({ v: 1, items: [[id, 5]] }), full("m3"));
    publish("content_add.unknown.a", JSON.stringify({ v: 2, items: [[id, "5"]] }), full("m4"));
    publish(
      "relation_add.content_in_revision.a",
      JSON.stringify({ v: 1, items: [[id, id, null]] }),
      full("m5"),
    );
    publish("content_add.unknown.a", JSON.stringify({ v: 1, items: [[id, "5"]] }), { messageId: "m6" });
    await waitFor(() => deadLetters.length === 6, 20_000, "six dead letters");
    await waitFor(() => replies.length === 5, 20_000, "five error replies");
    expect(replies).toEqual(
      ["m1", "m2", "m3", "m4", "m5"].map((m) => ({
        v: 1,
        ok: false,
        messageIds: [m],
        error: expect.any(String),
      })),
    );
    await waitFor(
      async () => (await queueDepth(`${prefix}content.dead`))?.ready === 6,
      20_000,
      "the dead-letter queue",
    );
    // The worker keeps serving, and nothing of the bad messages was stored.
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: local,
      prefix,
      waitMinMs: 30_000,
    });
    const fixture = generateFixture({ seed: 13 });
    for (const call of fixture.calls) expect(await apply(client, call)).toBe(true);
    await client.close();
    await local.close();
    await server.stop();
    await connection.close();
    expect(await fileDump(file)).toEqual(await directDump(fixture.calls));
  }, 60_000);

  it("runs two servers at once (hot standby): one consumer is active per queue, the other takes over on stop", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const a = await RmqStorageServer.start({ url: AMQP_URL, storage: () => openSqliteStorage(file), prefix });
    const b = await RmqStorageServer.start({ url: AMQP_URL, storage: () => openSqliteStorage(file), prefix });
    const batches = { a: 0, b: 0 };
    a.on("batch", () => batches.a++);
    b.on("batch", () => batches.b++);
    expect((await queueDepth(`${prefix}content_add.unknown.0`))?.consumers).toBe(2);
    const local = await reader(file);
    const client = await RmqStorageClient.connect({
      url: AMQP_URL,
      storage: local,
      prefix,
      waitMinMs: 60_000,
    });
    const big = bigContentCall(20_000);
    const fixture = generateFixture({ seed: 14 });
    const pending = apply(client, big);
    await waitFor(() => batches.a >= 1, 30_000, "server a to write");
    expect(batches.b).toBe(0);
    await a.stop();
    const results = await Promise.all(fixture.calls.map((call) => apply(client, call)));
    expect(results.every(Boolean)).toBe(true);
    expect(await pending).toBe(true);
    expect(batches.b).toBeGreaterThan(0);
    await client.close();
    await local.close();
    await b.stop();
    expect(await fileDump(file)).toEqual(await directDump([big, ...fixture.calls]));
  }, 90_000);

  it("serves two clients writing at once, overlapping", async () => {
    const [file, prefix] = [box.file(), box.prefix()];
    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(file),
      prefix,
    });
    const local = await reader(file);
    const one = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix, waitMinMs: 60_000 });
    const two = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix, waitMinMs: 60_000 });
    const fixture = generateFixture({ seed: 15 });
    const firstContents = fixture.calls.find((c) => c[0] === "contentAdd");
    if (firstContents?.[0] !== "contentAdd") throw new Error("the fixture has no contentAdd");
    const early = new Map([...firstContents[1]].map(([k, v]) => [k, v - 5n]));
    const calls: Call[] = [...fixture.calls, ["contentAdd", early], bigContentCall(5_000)];
    const results = await Promise.all(calls.map((call, i) => apply(i % 2 === 0 ? one : two, call)));
    expect(results.every(Boolean)).toBe(true);
    // The same calls again, from the other client: idempotent.
    expect(
      (await Promise.all(calls.map((call, i) => apply(i % 2 === 0 ? two : one, call)))).every(Boolean),
    ).toBe(true);
    await one.close();
    await two.close();
    await local.close();
    await server.stop();
    expect(await fileDump(file)).toEqual(await directDump(calls));
  }, 60_000);
});
