import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import amqp from "amqplib";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startFakeErmrest } from "../src/testing/index.js";
import { insertQueued, startClaimAgents } from "./claim-agents.js";

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
});

/** Whether a request is a claim: the attributegroup PUT that renames `state` (`expected:=state`). */
const isClaim = (request: { method: string; url: string }) =>
  request.method === "PUT" && request.url.includes(":=");

/** What one swarm run measured. */
interface SwarmFigures {
  /** The share of claim PUTs ERMrest rolled back. */
  rolledBack: number;
  /** From the first request to the last row complete, in ms. */
  wallMs: number;
  /** The rows the busiest agent claimed ÷ its fair share (1/20 of the rows). */
  busiestShare: number;
}

/**
 * 20 agents with change notices and `writePacing` (the library's default when `undefined`) claim and
 * complete 1 000 rows on a fresh fake, each claim taking 10 rows with `spread` and one completion PUT per
 * batch (the README's loop); checks what must hold in every run (no double claim, no agent failed, at most
 * 3 requests per row) and returns the figures.
 */
async function swarm(writePacing: boolean | "commit-rate" | undefined): Promise<SwarmFigures> {
  const noticeExchange = uniqueName("pc-pacing");
  // The fake's default write path: every write holds the table for 10–30 ms (writeDurationMs 20), and a write
  // is rolled back when another write to the table commits while it runs, as on ERMrest.
  const fake = await startFakeErmrest({
    tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
    amqpUrl: AMQP_URL,
    noticeExchange,
  });
  onTestFinished(async () => {
    await fake.close();
    const connection = await amqp.connect(AMQP_URL);
    await (await connection.createChannel()).deleteExchange(noticeExchange).catch(() => {});
    await connection.close();
  });
  await insertQueued(fake, 1_000);
  const from = fake.requests.length;
  const started = performance.now();
  const run = startClaimAgents(fake, {
    agents: 20,
    amqpServer: AMQP_URL,
    noticeExchange,
    pollingMs: 60_000,
    limit: 1_000,
    claimRows: 10,
    complete: "batch",
    ...(writePacing === undefined ? {} : { writePacing }),
  });
  onTestFinished(run.stop);
  const complete = () => fake.rows("S:Job").filter((row) => row.state === "complete").length;
  await waitFor(() => complete() === 1_000, 85_000, "every row complete");
  const wallMs = performance.now() - started;
  await run.stop();
  const requests = fake.requests.slice(from);
  const claims = requests.filter(isClaim);
  expect(run.doubleClaims()).toBe(0);
  expect(run.ended.filter((end) => end.error !== undefined)).toEqual([]);
  expect(requests.length / 1_000).toBeLessThanOrEqual(3);
  const perAgent = new Map<number, number>();
  for (const [first] of run.claims.values())
    if (first) perAgent.set(first.agent, (perAgent.get(first.agent) ?? 0) + 1);
  return {
    rolledBack: claims.filter((r) => r.status === 503).length / claims.length,
    wallMs,
    busiestShare: (Math.max(...perAgent.values()) * 20) / 1_000,
  };
}

describe('writePacing: "commit-rate" under ERMrest\'s write conflicts', () => {
  it("20 agents with change notices claim 1 000 rows with at most 15 % of the claims rolled back", async () => {
    // Unpaced, about 60 % of these claims are rolled back (see docs/benchmarks/polling-catalog.md). The share
    // is a rate, and a grossly loaded machine fires the agents' timers late and in bunches (single runs
    // reached 16–17 % beside the rest of the suite): a run over the target is measured again before it fails,
    // as `pnpm check:startup` does.
    const first = (await swarm("commit-rate")).rolledBack;
    if (first <= 0.15) return;
    console.log(`claims rolled back: ${(first * 100).toFixed(1)} %, over 15 %; measuring again`);
    expect((await swarm("commit-rate")).rolledBack).toBeLessThanOrEqual(0.15);
  }, 180_000);
});

describe("the default pacing (turns handed round by the notice broker)", () => {
  it("20 agents: at most 15 % of the claims rolled back, within twice the unpaced wall time, fair shares", async () => {
    const unpaced = await swarm(false);
    const paced = await swarm(undefined);
    console.log(JSON.stringify({ unpaced, paced }));
    expect(unpaced.rolledBack).toBeGreaterThan(0.15); // the fake conflicts as ERMrest does
    expect(paced.rolledBack).toBeLessThanOrEqual(0.15);
    expect(paced.wallMs).toBeLessThanOrEqual(2 * unpaced.wallMs);
    expect(paced.busiestShare).toBeLessThanOrEqual(2);
  }, 120_000);
});
