import { XError } from "@x/core";
import { recordingLogger } from "@x/test-support/recording-logger";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { type HTTPError, PollingErmrestCatalog } from "../src/index.js";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";
import { insertQueued, startClaimAgents } from "./claim-agents.js";
import { closedPort } from "./helpers.js";
import { startStubServer } from "./stub-server.js";

async function jobsFake(options: { transactionAbortRate?: number } = {}): Promise<FakeErmrest> {
  const fake = await startFakeErmrest({
    tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
    ...options,
  });
  onTestFinished(() => fake.close());
  return fake;
}

/** Agents with no broker (a closed port): polling only, so only the catalog wakes them. */
async function agents(
  fake: FakeErmrest,
  options: Omit<Parameters<typeof startClaimAgents>[1], "amqpServer">,
) {
  const run = startClaimAgents(fake, { ...options, amqpServer: `127.0.0.1:${await closedPort()}` });
  onTestFinished(run.stop);
  return run;
}

describe("blockingPoll through a catalog outage", () => {
  it("keeps 5 agents running through a 30 s restart; rows inserted after it are claimed within pollingMs + 1 s", async () => {
    const fake = await jobsFake();
    const pollingMs = 2_000;
    const run = await agents(fake, { agents: 5, pollingMs });
    await insertQueued(fake, 20);
    await waitFor(() => run.claims.size === 20, 20_000, "the first rows claimed");
    await fake.restart(30_000);
    const backAt = performance.now();
    await insertQueued(fake, 20);
    await waitFor(() => run.claims.size === 40, pollingMs + 5_000, "the rows inserted after the restart");
    const latest = Math.max(...[...run.claims.values()].flat().map((claim) => claim.at));
    expect(latest - backAt).toBeLessThanOrEqual(pollingMs + 1_000);
    expect(run.ended).toEqual([]);
    expect(run.doubleClaims()).toBe(0);
    expect(new Set(run.outages.map((o) => o.agent)).size).toBe(5);
    for (const outage of run.outages) expect(outage.retryInMs).toBeLessThanOrEqual(pollingMs);
    await waitFor(
      () => new Set(run.recoveries.map((r) => r.agent)).size === 5,
      pollingMs + 5_000,
      "recoveries",
    );
    // Each recovery reports the whole outage: from the agent's first failed drain (which a loaded machine may
    // delay by seconds into the restart) until after the server was back.
    for (const recovery of run.recoveries) {
      const outage = run.outages.find((o) => o.agent === recovery.agent)!;
      expect(outage.at).toBeLessThan(backAt);
      expect(recovery.durationMs).toBeGreaterThanOrEqual(backAt - outage.at - 50);
      expect(recovery.failures).toBeGreaterThanOrEqual(2);
    }
    expect(run.wakes.filter((w) => w.reason === "retry").length).toBeGreaterThanOrEqual(10);
  }, 90_000);

  it("retries below maxRetryDelayMs during an outage and reports each agent's outage once", async () => {
    const fake = await jobsFake();
    // Polls 3 s apart and retries under 0.4 s: a loaded machine stretches a retry's gap, never by seconds.
    const pollingMs = 3_000;
    const run = await agents(fake, { agents: 2, pollingMs, maxRetryDelayMs: 400 });
    await waitFor(() => run.wakes.length === 2, 10_000, "the start drains");
    const restarted = fake.restart(8_000); // at least 5 s of retries after the first failed poll
    await waitFor(() => run.outages.length === 2, 10_000, "the outages");
    await restarted;
    await waitFor(() => run.recoveries.length === 2, 5_000, "the recoveries");
    expect(run.outages.length).toBe(2);
    const retries = run.wakes.filter((w) => w.reason === "retry");
    expect(retries.length).toBeGreaterThanOrEqual(4);
    for (const outage of run.outages) expect(outage.retryInMs).toBeLessThan(400);
    // Retries come sooner than polls: some drain follows the one before by less than pollingMs.
    const gaps = retries.map(
      (w) => w.at - Math.max(...run.wakes.filter((o) => o.agent === w.agent && o.at < w.at).map((o) => o.at)),
    );
    expect(Math.min(...gaps)).toBeLessThan(pollingMs);
    expect(run.ended).toEqual([]);
  }, 30_000);

  it("logs an outage quietly: one warning when it starts, a summary every outageSummaryMs, one line at its end", async () => {
    const fake = await jobsFake();
    const recorder = recordingLogger();
    const run = await agents(fake, {
      agents: 2,
      pollingMs: 500,
      maxRetryDelayMs: 200,
      outageSummaryMs: 1_500,
      logger: recorder.logger,
    });
    await waitFor(() => run.wakes.length === 2, 10_000, "the start drains");
    await fake.restart(8_000);
    await waitFor(() => run.recoveries.length === 2, 10_000, "the recoveries");
    const failures = run.recoveries.reduce((sum, recovery) => sum + recovery.failures, 0);
    expect(failures).toBeGreaterThanOrEqual(4); // retried, quietly
    const warnings = recorder.messages("warn").filter((m) => !m.startsWith("AMQP bind failed")); // no broker
    const started = warnings.filter(
      (m) => m === "The catalog is unavailable; retrying the drain until it is back.",
    );
    expect(started).toHaveLength(2);
    const summaries = warnings.filter((m) => m === "The catalog is still unavailable.").length;
    expect(summaries).toBeGreaterThanOrEqual(1);
    expect(summaries).toBeLessThan(failures - 2);
    expect(warnings.length, JSON.stringify(warnings)).toBe(2 + summaries);
    expect(recorder.messages("info").filter((m) => m === "The catalog is back.")).toHaveLength(2);
    expect(recorder.messages("info")).not.toContain("Retrying the drain after a catalog outage.");
    expect(recorder.messages("debug")).toContain("Retrying the drain after a catalog outage.");
    // Durations in logs are whole milliseconds.
    for (const record of recorder.records)
      for (const [name, value] of Object.entries(record.fields))
        if (name.endsWith("Ms")) expect(Number.isInteger(value)).toBe(true);
  }, 30_000);

  it("rejects once the outage lasted maxOutageMs, with the drain's error", async () => {
    const fake = await jobsFake();
    const run = await agents(fake, { agents: 1, pollingMs: 300, maxRetryDelayMs: 200, maxOutageMs: 1_000 });
    await waitFor(() => run.wakes.length === 1, 10_000, "the start drain");
    const stoppedAt = performance.now();
    void fake.restart(20_000);
    await waitFor(() => run.ended.length === 1, 10_000, "blockingPoll to reject");
    expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(1_000);
    expect(XError.is(run.ended[0]?.error, "ERR_X_POLLING_CATALOG_NETWORK")).toBe(true);
    expect(run.outages).toHaveLength(1);
  }, 30_000);

  it("with maxOutageMs 0 rejects on the first outage error, as before", async () => {
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: `127.0.0.1:${await closedPort()}`,
      catalogId: 1,
      amqpServer: `127.0.0.1:${await closedPort()}`,
    });
    const error = await catalog
      .blockingPoll(() => catalog.get("/entity/S:Job"), { maxOutageMs: 0 })
      .catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_NETWORK")).toBe(true);
    expect((error as Error).message).toMatch(/fetch failed: connect ECONNREFUSED/);
  });

  it("rejects at once on errors retrying cannot fix: 401, 403, 404, 409 and a bad URL", async () => {
    for (const status of [401, 403, 404, 409]) {
      await using stub = await startStubServer((_request, response) => {
        response.writeHead(status, { "Content-Type": "text/plain" }).end("no");
      });
      const catalog = new PollingErmrestCatalog({
        scheme: "http",
        server: stub.server,
        catalogId: 1,
        amqpServer: `127.0.0.1:${await closedPort()}`,
      });
      const outages: unknown[] = [];
      catalog.on("outage", (event) => outages.push(event));
      const started = performance.now();
      const error = await catalog.blockingPoll(() => catalog.get("/entity/S:Job")).catch((e: unknown) => e);
      expect((error as HTTPError).status).toBe(status);
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_HTTP")).toBe(true);
      expect(outages).toEqual([]);
      expect(performance.now() - started).toBeLessThan(2_500);
    }
    const badPort = new PollingErmrestCatalog({
      scheme: "http",
      server: "127.0.0.1:99999",
      catalogId: 1,
      amqpServer: `127.0.0.1:${await closedPort()}`,
    });
    const error = await badPort.blockingPoll(() => badPort.get("/entity/S:Job")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/parse URL/i);
  });

  it("treats 502, 503 and 504 that survive the request's retries as an outage", async () => {
    let hits = 0;
    await using stub = await startStubServer((_request, response) => {
      hits++;
      if (hits <= 5) response.writeHead(502, { "Content-Type": "text/plain" }).end("bad gateway");
      else response.writeHead(200, { "Content-Type": "application/json" }).end("[]");
    });
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: stub.server,
      catalogId: 1,
      amqpServer: `127.0.0.1:${await closedPort()}`,
    });
    const outages: Array<{ error: Error }> = [];
    const recovered: unknown[] = [];
    catalog.on("outage", (event) => outages.push(event));
    catalog.on("recovered", (event) => recovered.push(event));
    const controller = new AbortController();
    const done = catalog.blockingPoll(() => catalog.get("/entity/S:Job").then(() => false), {
      signal: controller.signal,
      maxRetryDelayMs: 200,
    });
    await waitFor(() => recovered.length === 1, 10_000, "the recovery");
    expect((outages[0] as { error: HTTPError }).error.status).toBe(502);
    controller.abort();
    await done;
  });
});
