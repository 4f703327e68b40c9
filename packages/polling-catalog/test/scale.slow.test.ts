import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";
import { leaseJobTable, startLeaseAgents } from "./lease-agents.js";

const agents = 20;

/**
 * Runs the README's loop with {@link agents} agents on a queue of `queued` rows until `completions` rows are
 * complete; the per-completed-row figures of the requests answered until then.
 */
async function measure(queued: number, completions: number) {
  const rows = Array.from({ length: queued }, (_, i) => ({ id: i + 1, state: "queued" }));
  const fake: FakeErmrest = await startFakeErmrest({ tables: { "S:Job": { ...leaseJobTable, rows } } });
  try {
    const started = performance.now();
    const run = startLeaseAgents(fake, { agents, leaseMs: 600_000, pollingMs: 1_000 });
    const done = () => run.completed.reduce((sum, n) => sum + n, 0);
    await waitFor(() => done() >= completions, 110_000, `${completions} rows complete`);
    const seconds = (performance.now() - started) / 1_000;
    const requests = [...fake.requests];
    const completed = done();
    await run.stop();
    expect(run.ended.filter((end) => end.error !== undefined)).toEqual([]);
    const claims = requests.filter((r) => r.method === "PUT" && r.url.includes("expected:="));
    return {
      queued,
      completed,
      wallSeconds: Number(seconds.toFixed(2)),
      requestsPerCompletedRow: Number((requests.length / completed).toFixed(3)),
      rowsReadPerCompletedRow: Number(
        (requests.reduce((sum, r) => sum + (r.rows ?? 0), 0) / completed).toFixed(2),
      ),
      readsPerClaim: Number((requests.filter((r) => r.method === "GET").length / claims.length).toFixed(3)),
      claimRollbackShare: Number((claims.filter((r) => r.status === 503).length / claims.length).toFixed(3)),
    };
  } finally {
    await fake.close();
  }
}

describe("a queue of 100 000 rows", () => {
  it("costs each completed row what a queue of 1 000 does, within 20 %", async () => {
    const small = await measure(1_000, 1_000);
    const large = await measure(100_000, 1_000);
    console.log(JSON.stringify({ bench: "polling-catalog.scale", agents, small, large }));
    for (const figure of [
      "requestsPerCompletedRow",
      "rowsReadPerCompletedRow",
      "claimRollbackShare",
    ] as const)
      expect(Math.abs(large[figure] - small[figure]) / small[figure], figure).toBeLessThanOrEqual(0.2);
  }, 240_000);
});
