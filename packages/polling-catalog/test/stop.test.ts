import type { IncomingMessage, ServerResponse } from "node:http";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { PollingErmrestCatalog, type PollingErmrestCatalogOptions } from "../src/index.js";
import { startStubServer } from "./stub-server.js";

/** How soon after the abort `blockingPoll` must resolve, in ms. */
const stopWithinMs = 1_000;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A stub catalog answering `handler`, and a catalog on it with `options`. */
async function stubCatalog(handler: Handler, options: Partial<PollingErmrestCatalogOptions> = {}) {
  const stub = await startStubServer(handler);
  onTestFinished(stub.close);
  return new PollingErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1, ...options });
}

/** Answers every write `503 Transaction aborted.` after `delayMs`, and every GET `[]`. */
const rollingBack =
  (delayMs: number): Handler =>
  (request, response) => {
    request.resume();
    if (request.method === "GET") return void response.writeHead(200).end("[]");
    setTimeout(
      () => response.writeHead(503, { "Content-Type": "text/plain" }).end("Transaction aborted.\n"),
      delayMs,
    );
  };

/**
 * Runs `lookForWork` in `blockingPoll` until `ready()` says it sits in the wait under test, aborts, and expects
 * `blockingPoll` to resolve within {@link stopWithinMs}.
 */
async function expectStopsOnTime(
  catalog: PollingErmrestCatalog,
  lookForWork: () => unknown,
  ready: () => boolean,
  options: { pollingMs?: number; maxRetryDelayMs?: number } = {},
) {
  const controller = new AbortController();
  const done = catalog.blockingPoll(lookForWork, { ...options, signal: controller.signal });
  let settled = false;
  void done.finally(() => {
    settled = true;
  });
  await waitFor(() => ready() || settled, 20_000, "the wait under test");
  expect(settled).toBe(false);
  const abortedAt = performance.now();
  controller.abort();
  await done;
  expect(performance.now() - abortedAt).toBeLessThan(stopWithinMs);
}

describe("blockingPoll stops within a second of the abort", () => {
  it("during the wait before resending a rolled-back write", async () => {
    let puts = 0;
    const catalog = await stubCatalog((request, response) => {
      request.resume();
      puts++;
      response
        .writeHead(503, { "Retry-After": "30", "Content-Type": "text/plain" })
        .end("Transaction aborted.\n");
    });
    await expectStopsOnTime(
      catalog,
      () => catalog.put("/attributegroup/S:Job/id;state", { json: [] }),
      () => puts >= 1,
    );
  });

  it.each([
    ["true", true, 3],
    ["commit-rate", "commit-rate", 1],
  ] as const)(
    "during a pacing wait (writePacing: %s)",
    async (_name, writePacing, rollbacks) => {
      // Writes of 300 ms, all rolled back: a gap of 1.2 s or more after two (true), a mean wait of about 2 min
      // after one (commit-rate).
      const catalog = await stubCatalog(rollingBack(300), { writePacing, maxTransactionRetryMs: 0 });
      let failed = 0;
      await expectStopsOnTime(
        catalog,
        async () => {
          await catalog.put("/attributegroup/S:Job/id;state", { json: [] }).catch(() => failed++);
          return true;
        },
        () => failed >= rollbacks,
      );
    },
    30_000,
  );

  it("during a server error's Retry-After wait", async () => {
    let hits = 0;
    const catalog = await stubCatalog((request, response) => {
      request.resume();
      hits++;
      response.writeHead(503, { "Retry-After": "30", "Content-Type": "text/plain" }).end("busy");
    });
    await expectStopsOnTime(
      catalog,
      () => catalog.get("/entity/S:Job"),
      () => hits >= 1,
    );
  });

  it("during a GET the server never answers", async () => {
    let hits = 0;
    const catalog = await stubCatalog((request) => {
      request.resume();
      hits++;
    });
    await expectStopsOnTime(
      catalog,
      () => catalog.get("/entity/S:Job"),
      () => hits >= 1,
    );
  });

  it("during an outage's backoff", async () => {
    const catalog = await stubCatalog((request, response) => {
      request.resume();
      response.writeHead(502, { "Content-Type": "text/plain" }).end("bad gateway");
    });
    let outages = 0;
    catalog.on("outage", () => outages++);
    await expectStopsOnTime(
      catalog,
      () => catalog.get("/entity/S:Job"),
      () => outages >= 1,
      {
        maxRetryDelayMs: 600_000,
      },
    );
  }, 30_000);
});

describe("stateChangeOnce's signal", () => {
  it("abandons the call: its GET rejects with the signal's reason", async () => {
    let hits = 0;
    const catalog = await stubCatalog((request) => {
      request.resume();
      hits++;
    });
    const controller = new AbortController();
    const call = catalog.stateChangeOnce(
      "/entity/S:Job",
      "/attributegroup/S:Job/id;state",
      (row) => row,
      null,
      {
        signal: controller.signal,
      },
    );
    await waitFor(() => hits >= 1, 10_000, "the GET");
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });

  it("ends the wait of a paced claim", async () => {
    const catalog = await stubCatalog(
      (request, response) => {
        request.resume();
        if (request.method === "GET") return void response.writeHead(200).end('[{"id":1}]');
        setTimeout(() => response.writeHead(503).end("Transaction aborted.\n"), 300);
      },
      { writePacing: "commit-rate", maxTransactionRetryMs: 0 },
    );
    const claim = (signal?: AbortSignal) =>
      catalog.stateChangeOnce("/entity/S:Job", "/attributegroup/S:Job/id;state", (row) => row, null, {
        signal,
      });
    await claim().catch(() => {}); // rolled back: the next write waits about 2 min on average
    const controller = new AbortController();
    const call = claim(controller.signal);
    const abortedAt = performance.now();
    controller.abort();
    await expect(call).rejects.toThrow(/abort/i);
    expect(performance.now() - abortedAt).toBeLessThan(stopWithinMs);
  }, 30_000);
});
