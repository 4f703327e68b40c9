import { recordingLogger } from "@x/test-support/recording-logger";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { PollingErmrestCatalog } from "../src/index.js";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";
import { leaseJobTable, startLeaseAgents } from "./lease-agents.js";

async function leaseFake(rows: number): Promise<FakeErmrest> {
  const fake = await startFakeErmrest({
    tables: {
      "S:Job": {
        ...leaseJobTable,
        rows: Array.from({ length: rows }, (_, i) => ({ id: i + 1, state: "queued" })),
      },
    },
  });
  onTestFinished(() => fake.close());
  return fake;
}

describe("a server under load", () => {
  it("a burst of 500s during a 20-agent run leaves every agent running and no row claimed", async () => {
    const fake = await leaseFake(400);
    const run = startLeaseAgents(fake, { agents: 20, leaseMs: 3_000, pollingMs: 500, maxRetryDelayMs: 300 });
    onTestFinished(run.stop);
    const done = () => fake.rows("S:Job").filter((row) => row.state === "complete").length;
    await waitFor(() => done() >= 40, 30_000, "the first rows complete");
    // ERMrest's answer when its database connection pool is exhausted, to every request for a while.
    fake.failNext(150, { status: 500 });
    await waitFor(() => run.outages.length > 0, 30_000, "an outage");
    const completed = () => run.completed.reduce((a, b) => a + b, 0);
    // the fake has applied the last completion before its agent has read the answer
    await waitFor(() => done() === 400 && completed() >= 400, 60_000, "every row complete");
    expect(run.ended).toEqual([]);
    expect(fake.rows("S:Job").filter((row) => row.state !== "complete")).toEqual([]);
    expect(completed()).toBe(400);
    for (const outage of run.outages) expect((outage.error as { status?: number }).status).toBe(500);
    await waitFor(
      () => new Set(run.recoveries).size === new Set(run.outages.map((o) => o.agent)).size,
      10_000,
      "recoveries",
    );
  }, 90_000);

  it("logs the error that ends blockingPoll at error level, with its code and cause", async () => {
    const fake = await leaseFake(0);
    const recorder = recordingLogger();
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      logger: recorder.logger,
    });
    const error = await catalog
      .blockingPoll(async () => {
        try {
          await catalog.get("/entity/S:Nope");
        } catch (cause) {
          throw new Error("could not read the jobs", { cause });
        }
      })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe("could not read the jobs");
    const record = recorder.records.find((r) => r.level === "error");
    expect(record?.msg).toBe("lookForWork failed with an error retrying cannot fix; stopping.");
    expect(record?.fields.error).toBe("Error: could not read the jobs");
    expect(record?.fields.causes).toEqual([expect.stringMatching(/^HTTPError: HTTP 409 .*S:Nope/)]);
  });

  it("a POST answered 500 is not an outage: it may have been applied", async () => {
    const fake = await leaseFake(0);
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
    });
    fake.failNext(1, { status: 500 });
    const error = await catalog
      .blockingPoll(() => catalog.post("/entity/S:Job", { json: [{ id: 1, state: "queued" }] }))
      .catch((e: unknown) => e);
    expect((error as { status?: number }).status).toBe(500);
  });
});
