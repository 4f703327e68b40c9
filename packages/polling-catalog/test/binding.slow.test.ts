import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { type AmqpEvent, PollingErmrestCatalog } from "../src/index.js";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";
import { insertQueued, startClaimAgents } from "./claim-agents.js";
import { closedPort, silentServer } from "./helpers.js";

async function jobsFake(): Promise<FakeErmrest> {
  const fake = await startFakeErmrest({
    tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
  });
  onTestFinished(() => fake.close());
  return fake;
}

/** A broker that black-holes packets, as an address. */
async function blackHole() {
  const { port, sockets } = await silentServer();
  return { address: `127.0.0.1:${port}`, sockets };
}

describe("binding never blocks polling", () => {
  it("with a black-holed broker, rows are claimed within pollingMs + 0.5 s while binds hang", async () => {
    const fake = await jobsFake();
    const hole = await blackHole();
    const pollingMs = 1_000;
    const run = startClaimAgents(fake, { agents: 3, amqpServer: hole.address, pollingMs });
    onTestFinished(run.stop);
    await waitFor(() => hole.sockets.length === 3, 5_000, "three hanging bind attempts");
    const latencies: number[] = [];
    // 8 s: inside the first bind attempts, which hang for their 10 s connect timeout.
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
      const before = run.claims.size;
      const insertedAt = await insertQueued(fake, 1);
      await waitFor(() => run.claims.size > before, pollingMs + 5_000, "the claim");
      const claimedAt = Math.max(...[...run.claims.values()].flat().map((claim) => claim.at));
      latencies.push(claimedAt - insertedAt);
    }
    expect(hole.sockets.length).toBe(3);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(pollingMs + 500);
    expect(run.ended).toEqual([]);
  }, 30_000);

  it("the start drain waits at most 1 s for a hanging first bind", async () => {
    const fake = await jobsFake();
    const hole = await blackHole();
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      amqpServer: hole.address,
    });
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const started = performance.now();
    let startedDrain = 0;
    void catalog.blockingPoll(
      () => {
        startedDrain ||= performance.now();
      },
      { signal: controller.signal },
    );
    await waitFor(() => startedDrain > 0, 5_000, "the start drain");
    expect(startedDrain - started).toBeGreaterThanOrEqual(900);
    expect(startedDrain - started).toBeLessThan(2_000);
  });

  it("caps the jittered bind backoff at maxBindDelayMs", async () => {
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: `127.0.0.1:${await closedPort()}`,
      catalogId: 1,
      amqpServer: `127.0.0.1:${await closedPort()}`,
    });
    const events: AmqpEvent[] = [];
    catalog.on("amqp", (event) => events.push(event));
    const controller = new AbortController();
    const done = catalog.blockingPoll(() => false, { maxBindDelayMs: 1_000, signal: controller.signal });
    await waitFor(() => events.length >= 5, 10_000, "five failed binds");
    controller.abort();
    await done;
    const delays = events.map((event) => (event.state === "down" ? event.retryInMs : Number.NaN));
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });
});
