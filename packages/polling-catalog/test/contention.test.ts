import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { startFakeErmrest } from "../src/testing/index.js";
import { insertQueued, startClaimAgents } from "./claim-agents.js";
import { closedPort } from "./helpers.js";

describe("contention-aware claiming", () => {
  it("20 agents, 10 % aborted writes, 1 000 rows: no double claim, none left, at most 3 requests per row", async () => {
    const fake = await startFakeErmrest({
      tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
      writeDurationMs: 0,
    });
    onTestFinished(() => fake.close());
    await insertQueued(fake, 1_000);
    fake.transactionAbortRate = 0.1;
    const from = fake.requests.length;
    const run = startClaimAgents(fake, {
      agents: 20,
      amqpServer: `127.0.0.1:${await closedPort()}`,
      pollingMs: 60_000,
      limit: 100,
    });
    onTestFinished(run.stop);
    await waitFor(() => run.claims.size === 1_000, 120_000, "every row claimed");
    await run.stop();
    const requests = fake.requests.slice(from);
    expect(run.doubleClaims()).toBe(0);
    expect(fake.rows("S:Job").filter((row) => row.state !== "claimed")).toEqual([]);
    expect(new Set(fake.rows("S:Job").map((row) => row.owner)).size).toBeGreaterThan(10);
    expect(requests.filter((r) => r.status === 503).length).toBeGreaterThan(50);
    expect(run.ended).toHaveLength(20);
    expect(run.ended.filter((end) => end.error !== undefined)).toEqual([]);
    expect(requests.length / 1_000).toBeLessThanOrEqual(3);
  }, 180_000);
});
