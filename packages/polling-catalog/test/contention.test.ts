import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { startFakeErmrest } from "../src/testing/index.js";
import { insertQueued, startClaimAgents } from "./claim-agents.js";
import { closedPort } from "./helpers.js";

describe("claiming under ERMrest's write conflicts", () => {
  it("20 agents complete 1 000 rows: none stuck, no double claim, at most 3 requests per completed row", async () => {
    const fake = await startFakeErmrest({
      tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
      writeDurationMs: 0,
    });
    onTestFinished(() => fake.close());
    await insertQueued(fake, 1_000);
    // Every write holds the table for 2–6 ms: overlapping writes conflict as on ERMrest, whatever their rows.
    fake.writeDurationMs = 4;
    const from = fake.requests.length;
    const run = startClaimAgents(fake, {
      agents: 20,
      amqpServer: `127.0.0.1:${await closedPort()}`,
      pollingMs: 60_000,
      limit: 500,
      claimRows: 5,
      complete: true,
    });
    onTestFinished(run.stop);
    const complete = () => fake.rows("S:Job").filter((row) => row.state === "complete").length;
    await waitFor(() => complete() === 1_000, 240_000, "every row complete");
    await run.stop();
    const requests = fake.requests.slice(from);
    expect(run.doubleClaims()).toBe(0);
    expect(run.ended.filter((end) => end.error !== undefined)).toEqual([]);
    expect(requests.filter((r) => r.status === 503).length).toBeGreaterThan(50); // they did conflict
    expect(requests.length / 1_000).toBeLessThanOrEqual(3);
  }, 300_000);
});
