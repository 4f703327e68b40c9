import { XError } from "@x/core";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { waitFor } from "@x/test-support/wait-for";
import amqp, { type ChannelModel } from "amqplib";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ConcurrentUpdate, PollingErmrestCatalog } from "../src/index.js";
import { startAgentHarness } from "./agent-harness.js";
import { closedPort, silentServer } from "./helpers.js";

let broker: ChannelModel;
beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  broker = await amqp.connect(AMQP_URL);
});
afterAll(async () => {
  await broker?.close();
});

/** The `retryInMs` of an `amqp` down event after `failures` successive failures: 5 × 5^(n-1) s ± 50 %. */
function expectBindDelay(event: unknown, failures = 1): number {
  const { retryInMs } = event as { retryInMs: number };
  const base = 5_000 * 5 ** (failures - 1);
  expect(retryInMs).toBeGreaterThanOrEqual(base / 2);
  expect(retryInMs).toBeLessThanOrEqual(base * 1.5);
  return retryInMs;
}

/** {@link startAgentHarness}, closed when the current test finishes. */
async function harness(options?: Parameters<typeof startAgentHarness>[0]) {
  const h = await startAgentHarness(options);
  onTestFinished(h.close);
  return h;
}

/** Whether a queue still exists on the broker: an exclusive queue of another connection answers 405. */
async function queueExists(queue: string): Promise<boolean> {
  const channel = await broker.createChannel();
  channel.on("error", () => {});
  try {
    await channel.checkQueue(queue);
    await channel.close();
    return true;
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code === 405) return true;
    if (code === 404) return false;
    throw error;
  }
}

/** Deletes a queue as an operator would, with `rabbitmqctl`: works on another connection's exclusive queue. */
async function operatorDeletesQueue(queue: string): Promise<void> {
  const { execFile } = await import("node:child_process");
  await new Promise<void>((resolve, reject) =>
    execFile("rabbitmqctl", ["delete_queue", queue], (error) => (error ? reject(error) : resolve())),
  );
}

describe("blockingPoll options", () => {
  const catalog = new PollingErmrestCatalog({ server: "127.0.0.1:1", catalogId: 1 });
  it.each([
    ["pollingMs", { pollingMs: 0 }],
    ["pollingMs", { pollingMs: -1_000 }],
    ["pollingMs", { pollingMs: Number.POSITIVE_INFINITY }],
    ["pollingMs", { pollingMs: "10" }],
    ["coalesceMs", { coalesceMs: -100 }],
    ["coalesceMs", { coalesceMs: Number.NaN }],
    ["maxCoalesceMs", { maxCoalesceMs: Number.NaN }],
    // Beyond the longest timer (2^31 - 1 ms, about 24.8 days), which Node would fire at once.
    ["pollingMs", { pollingMs: 2 ** 31 }],
    ["coalesceMs", { coalesceMs: 2 ** 40 }],
    ["maxRetryDelayMs", { maxRetryDelayMs: 2 ** 31 }],
    ["maxBindDelayMs", { maxBindDelayMs: 2 ** 31 }],
    ["maxOutageMs", { maxOutageMs: 2 ** 31 }],
    ["signal", { signal: "abort" }],
  ])("rejects a bad %s before calling or connecting", async (option, options) => {
    let called = false;
    const events: unknown[] = [];
    catalog.on("amqp", (event) => events.push(event));
    const error = await catalog
      .blockingPoll(() => {
        called = true;
      }, options as never)
      .catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toContain(`invalid option ${option}`);
    expect(called).toBe(false);
    expect(events).toEqual([]);
  });

  it("rejects a lookForWork that is not a function", async () => {
    const error = await catalog.blockingPoll("work" as never).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
  });

  it("resolves at once on an already-aborted signal, without connecting or calling", async () => {
    const events: unknown[] = [];
    catalog.on("amqp", (event) => events.push(event));
    let called = false;
    await catalog.blockingPoll(
      () => {
        called = true;
      },
      { signal: AbortSignal.abort() },
    );
    expect(called).toBe(false);
    expect(events).toEqual([]);
  });
});

describe("blockingPoll with AMQP notices", () => {
  it("binds, drains on start, then wakes on a change notice after coalescing", async () => {
    const h = await harness();
    const calls: number[] = [];
    const done = h.catalog.blockingPoll(() => void calls.push(performance.now()), {
      coalesceMs: 100,
      signal: h.controller.signal,
    });
    await waitFor(() => h.wakes.length === 1, 10_000, "the start wake");
    expect(h.amqp).toEqual([expect.objectContaining({ state: "up" })]);
    expect(h.wakes[0]).toMatchObject({ reason: "start", notices: 0 });
    expect(h.recorder.messages("info")).toEqual(["Using AMQP hybrid polling.", "Draining on start."]);
    const wroteAt = await h.write();
    await waitFor(() => calls.length === 2, 10_000, "the notice drain");
    expect(h.wakes[1]).toMatchObject({ reason: "notice", notices: 1 });
    expect(calls[1] as number).toBeGreaterThanOrEqual(wroteAt + 50);
    expect(h.recorder.records.find((r) => r.msg === "Woke up on change-notice.")?.fields).toEqual({
      notices: 1,
    });
    h.controller.abort();
    await done;
  });

  it("coalesces a burst of notices into one wake", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      coalesceMs: 400,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    for (let i = 0; i < 5; i++) await h.write();
    await waitFor(() => calls === 2, 10_000, "the notice drain");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(calls).toBe(2);
    expect(h.wakes[1]).toMatchObject({ reason: "notice", notices: 5 });
    h.controller.abort();
    await done;
  });

  it("bounds coalescing by maxCoalesceMs under a steady stream of notices (deriva-py fix 2)", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      coalesceMs: 300,
      maxCoalesceMs: 600,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    const started = performance.now();
    let firstWriteAt = 0;
    while (calls === 1 && performance.now() - started < 5_000) {
      const at = await h.write();
      firstWriteAt ||= at;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(calls).toBe(2);
    const drainAt = h.wakes[1]?.at as number;
    expect(drainAt - firstWriteAt).toBeGreaterThanOrEqual(500);
    expect(drainAt - firstWriteAt).toBeLessThan(2_000);
    h.controller.abort();
    await done;
  });

  it("wakes on poll timeout when no notice comes", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 300,
      coalesceMs: 50,
      signal: h.controller.signal,
    });
    await waitFor(() => calls >= 3, 10_000, "two poll-timeout drains");
    expect(h.wakes.slice(1, 3).map((w) => w.reason)).toEqual(["poll-timeout", "poll-timeout"]);
    expect(h.recorder.messages("info")).toContain("Woke up on poll timeout.");
    const gap = (h.wakes[2]?.at as number) - (h.wakes[1]?.at as number);
    expect(gap).toBeGreaterThanOrEqual(300);
    h.controller.abort();
    await done;
  });

  it("turns a poll-timeout wake into a notice wake when a notice arrives while coalescing", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 300,
      coalesceMs: 1_000,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    const drainedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 600));
    await h.write();
    await waitFor(() => calls === 2, 10_000, "the coalesced drain");
    expect(h.wakes[1]).toMatchObject({ reason: "notice", notices: 1 });
    expect((h.wakes[1]?.at as number) - drainedAt).toBeGreaterThanOrEqual(1_500);
    h.controller.abort();
    await done;
  });

  it("repeats lookForWork while it answers truthy, yielding so that an abort stops even a synchronous loop", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(
      () => {
        calls++;
        return true;
      },
      { signal: h.controller.signal },
    );
    await waitFor(() => calls > 100, 10_000, "many calls");
    h.controller.abort();
    await done;
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(after);
    expect(h.wakes).toHaveLength(1);
  });

  it("follows a drain that wrote to the catalog with one more wake (parity)", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(
      async () => {
        calls++;
        if (calls === 1) await h.write();
      },
      { coalesceMs: 50, signal: h.controller.signal },
    );
    await waitFor(() => calls === 2, 10_000, "the wake caused by our own write");
    expect(h.wakes.map((w) => w.reason)).toEqual(["start", "notice"]);
    h.controller.abort();
    await done;
  });

  it("repeats at once on ConcurrentUpdate, recognised by its code", async () => {
    const h = await harness();
    const foreign = Object.assign(
      new XError("ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE", "from another copy"),
      {},
    );
    const thrown: unknown[] = [
      new ConcurrentUpdate(
        new (await import("../src/response.js")).CatalogResponse(412, new Headers(), "http://x", ""),
      ),
      foreign,
    ];
    let calls = 0;
    const done = h.catalog.blockingPoll(
      async () => {
        calls++;
        const error = thrown.shift();
        if (error) throw error;
        return false;
      },
      { signal: h.controller.signal },
    );
    await waitFor(() => calls === 3, 10_000, "three calls");
    expect(h.wakes).toHaveLength(1);
    expect(h.recorder.messages("info")).toContain("Handling a concurrent update: looking for work again.");
    h.controller.abort();
    await done;
  });

  it("rejects with lookForWork's error and closes the AMQP connection (deriva-py fix 7)", async () => {
    const h = await harness();
    const boom = new Error("boom");
    let calls = 0;
    const result = h.catalog
      .blockingPoll(
        () => {
          calls++;
          if (calls === 2) throw boom;
        },
        { signal: h.controller.signal },
      )
      .catch((e: unknown) => e);
    await waitFor(() => calls === 1, 10_000, "the start drain");
    const queue = h.queue() as string;
    expect(await queueExists(queue)).toBe(true);
    await h.write();
    expect(await result).toBe(boom);
    await waitFor(async () => !(await queueExists(queue)), 5_000, "the queue to go with the connection");
  });

  it("resolves promptly on abort while waiting, closing the connection", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, { signal: h.controller.signal });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    const queue = h.queue() as string;
    const started = performance.now();
    h.controller.abort();
    await done;
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(await queueExists(queue)).toBe(false);
  });

  it("on abort during a drain awaits the call in flight, starts no other, and logs its error", async () => {
    const h = await harness();
    let calls = 0;
    let release: () => void = () => {};
    const done = h.catalog.blockingPoll(
      async () => {
        calls++;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        throw new Error("late failure");
      },
      { signal: h.controller.signal },
    );
    await waitFor(() => calls === 1, 10_000, "the call in flight");
    h.controller.abort();
    let settled = false;
    void done.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);
    release();
    await expect(done).resolves.toBeUndefined();
    expect(calls).toBe(1);
    expect(h.recorder.messages("warn")).toContain("lookForWork failed after the abort; ignored.");
  });

  it("consumes notices with noAck, so nothing piles up unacknowledged (deriva-py fix 3)", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      coalesceMs: 50,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    for (let i = 0; i < 5; i++) await h.write();
    await waitFor(() => calls === 2, 10_000, "the notice drain");
    const { execFile } = await import("node:child_process");
    const listing = await new Promise<string>((resolve, reject) =>
      execFile(
        "rabbitmqctl",
        ["-q", "list_queues", "name", "messages_unacknowledged", "messages"],
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    const line = listing.split("\n").find((l) => l.startsWith(h.queue() as string));
    expect(line?.split(/\s+/).slice(1)).toEqual(["0", "0"]);
    h.controller.abort();
    await done;
  });

  it("gives each call its own connection", async () => {
    const h = await harness();
    const counts = [0, 0];
    const polls = [0, 1].map((i) =>
      h.catalog.blockingPoll(
        () => {
          counts[i] = (counts[i] ?? 0) + 1;
        },
        {
          coalesceMs: 50,
          signal: h.controller.signal,
        },
      ),
    );
    await waitFor(() => h.amqp.filter((e) => e.state === "up").length === 2, 10_000, "two binds");
    await waitFor(() => counts[0] === 1 && counts[1] === 1, 10_000, "two start drains");
    await h.write();
    await waitFor(() => counts[0] === 2 && counts[1] === 2, 10_000, "both woken by one notice");
    h.controller.abort();
    await Promise.all(polls);
  });
});

describe("blockingPoll falls back to polling on every AMQP failure (deriva-py fix 4)", () => {
  it("with a dead broker: down at start, drains at once (deriva-py fix 9), polls, and backs off binds about 5 then 25 s", async () => {
    const port = await closedPort();
    const h = await harness({ agentAmqp: `127.0.0.1:${port}` });
    const started = performance.now();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 500,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 5_000, "the start drain");
    expect(performance.now() - started).toBeLessThan(900);
    expect(h.amqp[0]).toMatchObject({ state: "down", error: expect.any(Error) });
    const first = expectBindDelay(h.amqp[0]);
    expect(h.wakes[0]).toMatchObject({ reason: "start" });
    await waitFor(() => h.amqp.length === 2, 9_000, "the second bind attempt");
    expect(h.amqp[1]).toMatchObject({ state: "down" });
    expectBindDelay(h.amqp[1], 2);
    const second = (h.amqp[1]?.at as number) - (h.amqp[0]?.at as number);
    expect(second).toBeGreaterThanOrEqual(first - 100);
    const polls = h.wakes.filter((w) => w.reason === "poll-timeout").length;
    expect(polls).toBeGreaterThanOrEqual(Math.floor(second / 500) - 2);
    expect(polls).toBeLessThanOrEqual(Math.ceil(second / 500) + 3);
    h.controller.abort();
    await done;
  }, 20_000);

  it("with a broker that accepts the connection but never answers: a failure after 10 s", async () => {
    const { port } = await silentServer();
    const h = await harness({ agentAmqp: `127.0.0.1:${port}` });
    let calls = 0;
    const started = performance.now();
    const done = h.catalog.blockingPoll(() => void calls++, { signal: h.controller.signal });
    await waitFor(() => h.amqp.length === 1, 15_000, "the failed bind");
    expect(performance.now() - started).toBeGreaterThanOrEqual(9_500);
    expect(h.amqp[0]).toMatchObject({ state: "down" });
    expectBindDelay(h.amqp[0]);
    expect(calls).toBe(1);
    h.controller.abort();
    await done;
  }, 30_000);

  it("abandons a bind attempt in progress on abort", async () => {
    const { port, sockets } = await silentServer();
    const h = await harness({ agentAmqp: `127.0.0.1:${port}` });
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, { signal: h.controller.signal });
    await waitFor(() => sockets.length === 1, 5_000, "the connection attempt");
    const abortedAt = performance.now();
    h.controller.abort();
    await done;
    expect(performance.now() - abortedAt).toBeLessThan(2_000);
    expect(calls).toBe(0);
    expect(h.amqp).toEqual([]);
  });

  it("with a channel error (406 on the exchange declare)", async () => {
    const h = await harness({ notices: false });
    const channel = await broker.createChannel();
    await channel.assertExchange(h.exchange, "direct", { durable: true });
    onTestFinished(async () => {
      await channel.deleteExchange(h.exchange);
      await channel.close();
    });
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 200,
      signal: h.controller.signal,
    });
    await waitFor(() => calls >= 3, 5_000, "polling drains");
    expect(h.amqp[0]).toMatchObject({ state: "down" });
    expectBindDelay(h.amqp[0]);
    expect(String((h.amqp[0] as { error: Error }).error.message)).toMatch(/PRECONDITION_FAILED/);
    h.controller.abort();
    await done;
  });

  it("with a cancelled consumer (its queue deleted)", async () => {
    const h = await harness();
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 300,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    await operatorDeletesQueue(h.queue() as string);
    await waitFor(() => h.amqp.length === 2, 5_000, "the loss");
    expect(h.amqp[1]).toMatchObject({ state: "down" });
    expectBindDelay(h.amqp[1]);
    await waitFor(() => h.wakes.some((w) => w.reason === "poll-timeout"), 5_000, "a polling drain");
    h.controller.abort();
    await done;
  });

  it("with a lost connection: warns once, accurately, polls meanwhile, and re-binds about 5 s later with a rebind drain", async () => {
    const proxy = await startTcpProxy(AMQP_URL);
    onTestFinished(() => proxy.close());
    const h = await harness({ agentAmqp: proxy.url });
    let calls = 0;
    const done = h.catalog.blockingPoll(() => void calls++, {
      pollingMs: 1_000,
      signal: h.controller.signal,
    });
    await waitFor(() => calls === 1, 10_000, "the start drain");
    proxy.cut();
    await waitFor(() => h.amqp.length === 2, 5_000, "the loss");
    const lostAt = h.amqp[1]?.at as number;
    expect(h.amqp[1]).toMatchObject({ state: "down" });
    const retryInMs = expectBindDelay(h.amqp[1]);
    expect(h.recorder.messages("warn")).toEqual(["Using basic polling due to AMQP communication problems."]);
    expect(calls).toBe(1);
    await waitFor(() => h.wakes.some((w) => w.reason === "rebind"), 10_000, "the re-bind");
    const rebind = h.wakes.find((w) => w.reason === "rebind");
    expect((rebind?.at as number) - lostAt).toBeGreaterThanOrEqual(retryInMs - 100);
    expect(h.amqp[2]).toMatchObject({ state: "up" });
    // Polling every second meanwhile: the re-bind comes 2.5 to 7.5 s after the loss (5 s ± 50 %).
    const polls = h.wakes.filter((w) => w.reason === "poll-timeout").length;
    expect(polls).toBeGreaterThanOrEqual(Math.max(1, Math.floor(retryInMs / 1_000) - 1));
    expect(h.recorder.messages("info")).toContain("Draining after AMQP re-bind.");
    await h.write();
    await waitFor(() => h.wakes.some((w) => w.reason === "notice"), 10_000, "notices after the re-bind");
    h.controller.abort();
    await done;
  }, 20_000);
});
