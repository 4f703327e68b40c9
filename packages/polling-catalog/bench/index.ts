/**
 * Benchmarks of @x/polling-catalog (see docs/benchmarks/polling-catalog.md). Prints one JSON line per figure,
 * each with a baseline measured in the same run. RabbitMQ on loopback, the fake ERMrest in-process.
 */
import { setMaxListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sleep } from "@x/core";
import amqp from "amqplib";
import { ErmrestCatalog, PollingErmrestCatalog, type Row } from "../src/index.js";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";

const amqpUrl = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const only = process.argv[2]?.startsWith("--") ? undefined : process.argv[2];
/** `--abort-rate <share>` makes every fake of the run abort that share of writes (`503 Transaction aborted.`). */
const abortFlag = process.argv.indexOf("--abort-rate");
const transactionAbortRate = abortFlag === -1 ? 0 : Number(process.argv[abortFlag + 1]);

/** `--write-ms <ms>` sets every fake's `writeDurationMs` (default: the fake's own, 10 ms). */
const writeFlag = process.argv.indexOf("--write-ms");
const writeDurationMs = writeFlag === -1 ? undefined : Number(process.argv[writeFlag + 1]);
const writeSetting = writeDurationMs === undefined ? {} : { writeDurationMs };
/** `--claim-rows <n>` sets the spread agents' `claimRows` (default 10, the library's). */
const claimFlag = process.argv.indexOf("--claim-rows");
const claimRows = claimFlag === -1 ? 10 : Number(process.argv[claimFlag + 1]);
/** `--complete-batch`: the spread agents mark a claimed batch complete with one PUT, not one per row. */
const completeBatch = process.argv.includes("--complete-batch");
/** `--agents <n>`: the spread figures run with `n` agents only (default 5, then 20). */
const agentsFlag = process.argv.indexOf("--agents");
/**
 * The agents' `writePacing`: the library's default (`"turns"`) unless `--unpaced` (`false`), `--pacing` (`true`)
 * or `--commit-rate` (`"commit-rate"`).
 */
const writePacing = process.argv.includes("--commit-rate")
  ? ("commit-rate" as const)
  : process.argv.includes("--pacing")
    ? true
    : process.argv.includes("--unpaced")
      ? false
      : ("turns" as const);
const agentCounts = agentsFlag === -1 ? [5, 20] : [Number(process.argv[agentsFlag + 1])];
/** `--rows <n>`: the spread figures claim `n` queued rows (default 1 000). */
const rowsFlag = process.argv.indexOf("--rows");
const spreadRows = rowsFlag === -1 ? 1_000 : Number(process.argv[rowsFlag + 1]);
/** `--limit <n>`: the spread agents' `?limit` (default 10 × `claimRows`, whatever the number of agents). */
const limitFlag = process.argv.indexOf("--limit");
const spreadLimit = limitFlag === -1 ? 10 * claimRows : Number(process.argv[limitFlag + 1]);
/** `--stop-after <n>`: the spread figures end once `n` rows are complete (default: every row). */
const stopFlag = process.argv.indexOf("--stop-after");
const stopAfter = stopFlag === -1 ? undefined : Number(process.argv[stopFlag + 1]);

function emit(figure: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** p50, p99 and the maximum of some latencies, rounded, as figure fields. */
function summary(latencies: number[]) {
  return {
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(Math.max(...latencies)),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

let exchangeCount = 0;
async function startFake(rows: Row[] = [], notices = true, abortRate = transactionAbortRate) {
  const noticeExchange = `pc-bench-${process.pid}-${exchangeCount++}`;
  const fake = await startFakeErmrest({
    tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], rows } },
    ...(notices ? { amqpUrl, noticeExchange } : {}),
    transactionAbortRate: abortRate,
    ...writeSetting,
  });
  const catalog = (amqpServer = amqpUrl) =>
    new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      amqpServer,
      noticeExchange,
      writePacing,
    });
  const cleanup = async () => {
    await fake.close();
    const connection = await amqp.connect(amqpUrl);
    await (await connection.createChannel()).deleteExchange(noticeExchange).catch(() => {});
    await connection.close();
  };
  return { fake, catalog, noticeExchange, cleanup };
}

let nextId = 1;
/** One insert through the binding (a POST rolled back by the fake is sent again); the time it completed. */
async function write(fake: FakeErmrest, state = "done"): Promise<number> {
  const writer = new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
  await writer.post("/entity/S:Job", { json: [{ id: nextId++, state }] });
  return performance.now();
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("benchmark condition timed out");
    await sleep(1);
  }
}

/** Write completion → lookForWork call, `count` isolated writes, with an agent in the given mode. */
async function latency(count: number, options: { notices: boolean; pollingMs: number }) {
  const { fake, catalog, cleanup } = await startFake();
  const deadBroker = "127.0.0.1:1";
  const agent = catalog(options.notices ? amqpUrl : deadBroker);
  const controller = new AbortController();
  const calls: number[] = [];
  const done = agent.blockingPoll(() => void calls.push(performance.now()), {
    coalesceMs: 100,
    pollingMs: options.pollingMs,
    signal: controller.signal,
  });
  await waitUntil(() => calls.length === 1, 10_000);
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = calls.length;
    // Isolated writes, after the previous wake has settled, at a random phase of the polling period.
    await sleep(options.notices ? 20 + Math.random() * 30 : Math.random() * options.pollingMs);
    const wroteAt = await write(fake);
    await waitUntil(() => calls.length > before, 10_000 + options.pollingMs * 2);
    latencies.push((calls[before] as number) - wroteAt);
    if (options.notices) await sleep(30);
  }
  controller.abort();
  await done;
  await cleanup();
  return latencies;
}

/** Raw amqplib: write completion → a plain consumer receives the notice. */
async function rawNoticeLatency(count: number) {
  const { fake, noticeExchange, cleanup } = await startFake();
  const connection = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue("", { exclusive: true });
  await channel.bindQueue(queue, noticeExchange, "");
  const received: number[] = [];
  await channel.consume(queue, () => void received.push(performance.now()), { noAck: true });
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = received.length;
    await sleep(5);
    const wroteAt = await write(fake);
    await waitUntil(() => received.length > before, 5_000);
    latencies.push((received[before] as number) - wroteAt);
  }
  await connection.close();
  await cleanup();
  return latencies;
}

async function latencyFigures() {
  const writes = 200;
  const raw = await rawNoticeLatency(writes);
  const notices = await latency(writes, { notices: true, pollingMs: 600_000 });
  emit({
    bench: "polling-catalog.latency-notices",
    writes,
    coalesceMs: 100,
    ...summary(notices),
    overheadP50Ms: round(percentile(notices, 50) - 100),
    targetP50Ms: 150,
    targetP99Ms: 300,
    baseline: "raw amqplib consumer of the same notice",
    baselineP50Ms: round(percentile(raw, 50), 2),
    baselineP99Ms: round(percentile(raw, 99), 2),
    ratioP50: round(percentile(notices, 50) / percentile(raw, 50)),
  });
  const pollingWrites = 30;
  const polling = await latency(pollingWrites, { notices: false, pollingMs: 1_000 });
  emit({
    bench: "polling-catalog.latency-polling-only",
    writes: pollingWrites,
    pollingMs: 1_000,
    ...summary(polling),
    baseline: "the notice-driven agent above",
    baselineP50Ms: round(percentile(notices, 50)),
    ratioP50: round(percentile(polling, 50) / percentile(notices, 50)),
  });
}

/** An idle agent threading its idle ETag: requests and bytes per polling period at the fake. */
async function idleRun(caching: boolean, pollingMs: number, periods: number) {
  const { fake, cleanup } = await startFake([{ id: 0, state: "done" }]);
  const agent = new PollingErmrestCatalog({
    scheme: "http",
    server: fake.server,
    catalogId: fake.catalogId,
    amqpServer: amqpUrl,
    noticeExchange: "unused-by-this-bench",
    caching,
  });
  let idleEtag: string | null = null;
  const lookForWork = async () => {
    const result = await agent.stateChangeOnce(
      "/entity/S:Job/state=queued",
      "/attributegroup/S:Job/RID;state",
      (row) => ({ RID: row.RID, state: "claimed" }),
      idleEtag,
    );
    idleEtag = result.idleEtag;
    return result.batch.length > 0;
  };
  const controller = new AbortController();
  const done = agent.blockingPoll(lookForWork, {
    pollingMs,
    coalesceMs: 0,
    signal: controller.signal,
  });
  await waitUntil(() => fake.requests.length === 1, 10_000);
  const from = fake.requests.length;
  await sleep(pollingMs * periods + pollingMs / 2);
  const seen = fake.requests.slice(from);
  controller.abort();
  await done;
  await cleanup();
  return { seen, bytes: 0 };
}

async function idleFigure() {
  const pollingMs = 500;
  const periods = 10;
  const threaded = await idleRun(true, pollingMs, periods);
  const uncached = await idleRun(false, pollingMs, periods);
  emit({
    bench: "polling-catalog.idle-cost",
    pollingMs,
    periods,
    requestsPerPeriod: round(threaded.seen.length / periods, 2),
    statuses: [...new Set(threaded.seen.map((r) => `${r.method} ${r.status}`))],
    conditional: threaded.seen.every((r) => r.headers["if-none-match"] !== undefined),
    target: "one conditional GET answered 304 per period, nothing else",
    baseline: "the same agent with caching: false (full 200 answers)",
    baselineRequestsPerPeriod: round(uncached.seen.length / periods, 2),
    baselineStatuses: [...new Set(uncached.seen.map((r) => `${r.method} ${r.status}`))],
  });
}

/** `agents` agents claim every queued row with blockingPoll and notices; counts claims and 412s. */
async function claimRun(rowsCount: number, agents: number, limit: number) {
  const rows = Array.from({ length: rowsCount }, (_, i) => ({ id: i + 1, state: "queued" }));
  const { fake, catalog, cleanup } = await startFake(rows);
  const controller = new AbortController();
  setMaxListeners(agents + 10, controller.signal);
  const claimed = new Map<string, number>();
  let conflicts = 0;
  const started = performance.now();
  const polls = Array.from({ length: agents }, (_, a) => {
    const agent = catalog();
    agent.on("claimed", ({ batch }) => {
      for (const [candidate] of batch)
        claimed.set(candidate.RID as string, (claimed.get(candidate.RID as string) ?? 0) + 1);
    });
    let idleEtag: string | null = null;
    const lookForWork = async () => {
      try {
        const result = await agent.stateChangeOnce(
          `/entity/S:Job/state=queued?limit=${limit}`,
          "/attributegroup/S:Job/RID;state,owner",
          (row) => ({ RID: row.RID, state: "claimed", owner: `agent-${a}` }),
          idleEtag,
        );
        idleEtag = result.idleEtag;
        return result.batch.length > 0;
      } catch (error) {
        conflicts++;
        throw error;
      }
    };
    return agent.blockingPoll(lookForWork, { coalesceMs: 100, signal: controller.signal });
  });
  await waitUntil(() => claimed.size === rowsCount, 600_000);
  const seconds = (performance.now() - started) / 1000;
  controller.abort();
  await Promise.all(polls);
  const stored = fake.rows("S:Job");
  const doubleClaims = [...claimed.values()].filter((n) => n > 1).length;
  const unclaimed = stored.filter((row) => row.state !== "claimed").length;
  const status412 = fake.requests.filter((r) => r.status === 412).length;
  const requests = fake.requests.length;
  await cleanup();
  return { seconds, doubleClaims, unclaimed, status412, conflicts, requests };
}

/** One client, no contention: GET a page of queued rows and claim it with a guarded PUT, until none are left. */
async function soloRun(rowsCount: number, limit: number) {
  const rows = Array.from({ length: rowsCount }, (_, i) => ({ id: i + 1, state: "queued" }));
  const { fake, catalog, cleanup } = await startFake(rows, false);
  const client = catalog();
  const started = performance.now();
  let idleEtag: string | null = null;
  for (;;) {
    const result = await client.stateChangeOnce(
      `/entity/S:Job/state=queued?limit=${limit}`,
      "/attributegroup/S:Job/RID;state,owner",
      (row) => ({ RID: row.RID, state: "claimed", owner: "solo" }),
      idleEtag,
    );
    idleEtag = result.idleEtag;
    if (result.batch.length === 0) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await fake.close();
  await cleanup();
  return seconds;
}

/**
 * `?limit=1` with 20 agents is a thundering herd by design (every agent races for the same first row), so it
 * costs about 20 requests per row: the default run uses 1 000 rows for it; `bench claim-full [rows]` runs it
 * alone with 10 000 rows (or `rows`).
 */
async function claimFigures(fullRows?: number) {
  const agents = 20;
  for (const limit of fullRows ? [1] : [1, 100]) {
    const rowsCount = fullRows ?? (limit === 1 ? 1_000 : 10_000);
    const run = await claimRun(rowsCount, agents, limit);
    const solo = await soloRun(rowsCount, limit);
    emit({
      bench: `polling-catalog.claim-limit-${limit}`,
      agents,
      rows: rowsCount,
      wallSeconds: round(run.seconds, 2),
      rowsPerSecond: round(rowsCount / run.seconds, 0),
      doubleClaims: run.doubleClaims,
      unclaimedRows: run.unclaimed,
      status412: run.status412,
      httpRequests: run.requests,
      baseline: "one client claiming alone (no contention, no notices)",
      baselineRowsPerSecond: round(rowsCount / solo, 0),
      ratio: round(solo / run.seconds, 2),
    });
  }
}

/**
 * `agents` agents with notices claiming one row at a time with `spread` (`?limit=5×agents`, a conditional
 * update); inserts `inserts` rows one at a time while they run when asked. Records each claim's time.
 */
function spreadAgents(
  env: Awaited<ReturnType<typeof startFake>>,
  agents: number,
  options: { pollingMs?: number; amqpServer?: string; complete?: boolean } = {},
) {
  const controller = new AbortController();
  setMaxListeners(agents + 10, controller.signal);
  const claimed = new Map<string, number>();
  const claimedAt = new Map<number, number>();
  const perAgent = Array.from({ length: agents }, () => 0);
  let completed = 0;
  let ended = 0;
  let failed = 0;
  const polls = Array.from({ length: agents }, (_, a) => {
    const agent = env.catalog(options.amqpServer);
    agent.on("claimed", ({ batch }) => {
      perAgent[a] = (perAgent[a] as number) + batch.length;
      for (const [candidate] of batch) {
        claimed.set(candidate.RID as string, (claimed.get(candidate.RID as string) ?? 0) + 1);
        claimedAt.set(candidate.id as number, performance.now());
      }
    });
    let idleEtag: string | null = null;
    const lookForWork = async () => {
      const result = await agent.stateChangeOnce(
        `/entity/S:Job/state=queued?limit=${spreadLimit}`,
        "/attributegroup/S:Job/RID,expected:=state;state,owner",
        (row) => ({ RID: row.RID, expected: "queued", state: "claimed", owner: `agent-${a}` }),
        idleEtag,
        { spread: true, claimRows },
      );
      idleEtag = result.idleEtag;
      if (options.complete && completeBatch && result.batch.length > 0) {
        await agent.put("/attributegroup/S:Job/RID;state", {
          json: result.batch.map(([job]) => ({ RID: job.RID, state: "complete" })),
        });
        completed += result.batch.length;
      } else if (options.complete)
        for (const [job] of result.batch) {
          await agent.put("/attributegroup/S:Job/RID;state", { json: [{ RID: job.RID, state: "complete" }] });
          completed++;
        }
      return result.batch.length > 0;
    };
    return agent
      .blockingPoll(lookForWork, {
        coalesceMs: 100,
        ...(options.pollingMs === undefined ? {} : { pollingMs: options.pollingMs }),
        signal: controller.signal,
      })
      .catch(() => failed++)
      .finally(() => ended++);
  });
  return {
    claimed,
    claimedAt,
    perAgent,
    /** How many rows the agents marked complete. */
    completed: () => completed,
    /** How many agents' `blockingPoll` rejected. */
    failed: () => failed,
    /** How many agents' `blockingPoll` has not ended. */
    running: () => agents - ended,
    stop: async () => {
      controller.abort();
      await Promise.all(polls);
    },
  };
}

/** Whether a request is a claim: an attributegroup PUT whose path renames `state` (`expected:=state`). */
const isClaimPut = (r: { method: string; url: string }) => r.method === "PUT" && r.url.includes(":=");

/**
 * Requests per completed row with `spread`, the README's agent loop: `rowsCount` queued rows, `agents` agents
 * that claim, then mark each claimed row complete with its own PUT.
 */
async function spreadRun(rowsCount: number, agents: number, abortRate: number) {
  const rows = Array.from({ length: rowsCount }, (_, i) => ({ id: i + 1, state: "queued" }));
  const env = await startFake(rows, !process.argv.includes("--no-notices"), abortRate);
  const started = performance.now();
  const run = spreadAgents(env, agents, { complete: true });
  // Until every row (or --stop-after rows) is complete, or none was completed for 15 s (rows left claimed).
  const goal = Math.min(rowsCount, stopAfter ?? rowsCount);
  let completed = 0;
  let progressAt = performance.now();
  while (completed < goal && performance.now() - progressAt < 15_000) {
    await sleep(100);
    const now = run.completed();
    if (now > completed) [completed, progressAt] = [now, performance.now()];
  }
  const seconds = (performance.now() - started) / 1000;
  const requests = [...env.fake.requests];
  await run.stop();
  const claims = requests.filter(isClaimPut);
  const figure = {
    agents,
    rows: rowsCount,
    completedRows: completed,
    claimRows,
    completion: completeBatch ? "one PUT per batch" : "one PUT per row",
    writePacing,
    notices: !process.argv.includes("--no-notices"),
    writeDurationMs: env.fake.writeDurationMs,
    transactionAbortRate: abortRate,
    wallSeconds: round(seconds, 2),
    requestsPerCompletedRow: round(requests.length / completed, 2),
    limit: spreadLimit,
    getsPerRow: round(requests.filter((r) => r.method === "GET").length / completed, 2),
    rowsReadPerCompletedRow: round(requests.reduce((sum, r) => sum + (r.rows ?? 0), 0) / completed, 2),
    claimPutsPerRow: round(claims.length / completed, 2),
    claimAbortShare: round(claims.filter((r) => r.status === 503).length / claims.length, 3),
    completionAbortShare: round(
      requests.filter((r) => r.method === "PUT" && !isClaimPut(r) && r.status === 503).length /
        Math.max(1, requests.filter((r) => r.method === "PUT" && !isClaimPut(r)).length),
      3,
    ),
    /** The most rows one agent claimed, over its fair share (1/agents of the rows). */
    maxShareOfFair: round((Math.max(...run.perAgent) * agents) / completed, 2),
    doubleClaims: [...run.claimed.values()].filter((n) => n > 1).length,
    stuckRows:
      stopAfter === undefined
        ? env.fake.rows("S:Job").filter((row) => row.state !== "complete").length
        : undefined,
    agentsFailed: run.failed(),
  };
  await env.cleanup();
  return figure;
}

/**
 * Insert → claim latency with `agents` spread agents and notices, isolated inserts one at a time (each after the
 * previous one's wake-ups settled when `settleMs` is given); the requests the agents made per insert, the insert
 * included.
 */
async function insertToClaim(agents: number, inserts: number, abortRate: number, settleMs = 0) {
  const env = await startFake([], true, abortRate);
  const run = spreadAgents(env, agents, { complete: settleMs > 0 });
  await sleep(1_500); // every agent bound and idle
  const first = env.fake.requests.length;
  const latencies: number[] = [];
  for (let i = 0; i < inserts; i++) {
    await sleep(settleMs + 50 + Math.random() * 100);
    const id = nextId;
    const insertedAt = await write(env.fake, "queued");
    await waitUntil(() => run.claimedAt.has(id), 10_000);
    latencies.push((run.claimedAt.get(id) as number) - insertedAt);
  }
  await sleep(settleMs);
  const requestsPerInsert = (env.fake.requests.length - first) / inserts;
  const kinds: Record<string, number> = {};
  for (const r of env.fake.requests.slice(first)) {
    const kind = `${r.method} ${r.method === "PUT" ? (isClaimPut(r) ? "claim " : "complete ") : ""}${r.status}`;
    kinds[kind] = round(((kinds[kind] ?? 0) * inserts + 1) / inserts, 2);
  }
  await run.stop();
  await env.cleanup();
  return Object.assign(latencies, { requestsPerInsert, kinds });
}

/** Requests per isolated insert with 5 agents that claim and complete each row (the README's loop). */
async function trickleFigure() {
  const run = await insertToClaim(5, 40, 0, 1_000);
  emit({
    bench: "polling-catalog.trickle",
    agents: 5,
    inserts: run.length,
    writePacing,
    requestsPerInsert: round(run.requestsPerInsert, 2),
    perInsert: run.kinds,
    ...summary(run),
  });
}

async function spreadFigures() {
  const baseline = {
    baseline:
      "spread with 5 rows per claim and one completion PUT per row, unpaced, on the same fake (writeDurationMs 20): 1.66 requests per completed row with 5 agents, 2.64–3.2 with 20 (55–65 % of claims aborted)",
  };
  for (const abortRate of [transactionAbortRate]) {
    for (const agents of agentCounts) {
      emit({
        bench: "polling-catalog.claim-spread",
        ...(await spreadRun(spreadRows, agents, abortRate)),
        target: 3,
        ...baseline,
      });
    }
  }
  // `--agents <n>` asks for the claim figures alone.
  for (const abortRate of agentsFlag === -1 ? [0, 0.1] : []) {
    const latencies = await insertToClaim(5, 200, abortRate);
    emit({
      bench: "polling-catalog.insert-to-claim",
      agents: 5,
      inserts: latencies.length,
      transactionAbortRate: abortRate,
      coalesceMs: 100,
      ...summary(latencies),
      baseline: "coalesceMs: the floor of a notice-driven claim",
      baselineMs: 100,
    });
  }
}

/**
 * 5 spread agents; the fake restarts with a 30 s outage; a row is inserted as soon as it is back. Measures the
 * time from its return to the first claim, with notices (defaults: pollingMs 10 min) and polling only.
 */
async function outageFigure(outageMs: number) {
  for (const mode of ["notices", "polling-only"] as const) {
    const env = await startFake([], true);
    const pollingMs = mode === "notices" ? 600_000 : 5_000;
    const run = spreadAgents(env, 5, mode === "notices" ? {} : { pollingMs, amqpServer: "127.0.0.1:1" });
    await sleep(1_500);
    await write(env.fake, "queued");
    await waitUntil(() => run.claimed.size === 1, 20_000);
    await env.fake.restart(outageMs);
    const backAt = performance.now();
    const id = nextId;
    await write(env.fake, "queued");
    await waitUntil(() => run.claimedAt.has(id), 120_000);
    const firstClaimMs = (run.claimedAt.get(id) as number) - backAt;
    const stillRunning = run.running();
    await run.stop();
    await env.cleanup();
    emit({
      bench: "polling-catalog.outage-recovery",
      mode,
      agents: 5,
      outageMs,
      pollingMs,
      maxRetryDelayMs: 30_000,
      backToFirstClaimMs: round(firstClaimMs),
      agentsStillRunning: stillRunning,
      target: `≤ pollingMs + 1 000 = ${pollingMs + 1_000}`,
      baseline:
        "before this change: every agent's blockingPoll rejected (fetch failed) and nothing was claimed",
    });
  }
}

/** A local HTTP server answering `bytes` of JSON to every GET, streamed in 64 KiB chunks; counts what it sent. */
async function bodyServer(bytes: number) {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const counter = { sent: 0 };
  const server = createServer((_request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    let left = bytes - 2;
    response.write("[");
    const pump = () => {
      while (left > 0 && !response.destroyed) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        counter.sent += part.length;
        if (!response.write(part)) return;
      }
      if (left <= 0) response.end("]");
    };
    response.on("drain", pump);
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => server.close(() => resolve()) && server.closeAllConnections());
  return { address, counter, close };
}

/**
 * Reading a body: the catalog's bounded reader against `fetch` + `Response.text()` (the baseline, what the
 * catalog did before), 20 GETs each of 1 MiB and 16 MiB; then a 64 MiB body against a 16 MiB bound: how much
 * the server got to send before the catalog cancelled it, against reading it whole.
 */
async function responseFigures() {
  for (const mib of [1, 16]) {
    const server = await bodyServer(mib * 1024 * 1024);
    const catalog = new ErmrestCatalog({
      scheme: "http",
      server: server.address,
      catalogId: 1,
      caching: false,
    });
    const url = `http://${server.address}/ermrest/catalog/1/entity/S:T`;
    const bounded: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) {
      let started = performance.now();
      await catalog.get("/entity/S:T");
      bounded.push(performance.now() - started);
      started = performance.now();
      await (await fetch(url)).text();
      baseline.push(performance.now() - started);
    }
    await server.close();
    emit({
      bench: "polling-catalog.response-read",
      bodyMiB: mib,
      gets: 20,
      ...summary(bounded),
      baseline: { what: "fetch + Response.text(), same server, same run", ...summary(baseline) },
    });
  }
  const hostileBytes = 64 * 1024 * 1024;
  const cap = async (read: (address: string) => Promise<unknown>) => {
    const server = await bodyServer(hostileBytes);
    const started = performance.now();
    const result = await read(server.address).then(
      () => "resolved",
      (error: { code?: string }) => error.code,
    );
    const elapsedMs = performance.now() - started;
    await sleep(200);
    await server.close();
    return { result, elapsedMs: round(elapsedMs), serverSentMiB: round(server.counter.sent / 1024 / 1024) };
  };
  const bounded = await cap((address) =>
    new ErmrestCatalog({
      scheme: "http",
      server: address,
      catalogId: 1,
      maxResponseBytes: 16 * 1024 * 1024,
    }).get("/entity/S:T"),
  );
  const whole = await cap(async (address) =>
    (await fetch(`http://${address}/ermrest/catalog/1/entity/S:T`)).text(),
  );
  emit({
    bench: "polling-catalog.response-cap",
    bodyMiB: hostileBytes / 1024 / 1024,
    maxResponseMiB: 16,
    ...bounded,
    baseline: { what: "fetch + Response.text() (before this change): the whole body in memory", ...whole },
  });
}

/**
 * `writers` clients each make `puts` sequential attributegroup PUTs, each to its own row of one table: no two
 * requests touch the same row, yet they conflict on ERMrest's table-level serialization. Counts the share of
 * requests answered `503 Transaction aborted.` and the calls that rejected.
 */
async function abortFigure(writers: number, puts: number) {
  const rows = Array.from({ length: writers }, (_, i) => ({ id: i + 1, state: "idle" }));
  const { fake, cleanup } = await startFake(rows, false);
  const started = performance.now();
  const calls = await Promise.all(
    rows.map(async ({ id }) => {
      const client = new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
      let rejected = 0;
      for (let i = 0; i < puts; i++) {
        await client
          .put("/attributegroup/S:Job/id;state", { json: [{ id, state: `put-${i}` }] })
          .catch(() => rejected++);
      }
      return rejected;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const requests = fake.requests.length;
  const aborted = fake.requests.filter((r) => r.status === 503).length;
  emit({
    bench: "polling-catalog.own-row-aborts",
    writers,
    putsPerWriter: puts,
    writeDurationMs: fake.writeDurationMs,
    wallSeconds: round(seconds, 2),
    requests,
    abortedShare: round(aborted / requests, 3),
    rejectedCalls: calls.reduce((a, b) => a + b, 0),
    baseline: "a real ERMrest (0.3–0.8 s per request): 47 % of requests aborted, 6 of 200 calls rejected",
  });
  await cleanup();
}

if (!only || only === "aborts") await abortFigure(8, 25);
if (!only || only === "spread") await spreadFigures();
if (!only || only === "trickle") await trickleFigure();
if (!only || only === "outage") await outageFigure(30_000);
if (!only || only === "latency") await latencyFigures();
if (!only || only === "idle") await idleFigure();
if (!only || only === "claim") await claimFigures();
if (!only || only === "response") await responseFigures();
if (only === "claim-full") await claimFigures(Number(process.argv[3] ?? 10_000));
