import { setMaxListeners } from "node:events";
import type { Logger } from "@x/core";
import type { OutageEvent, RecoveredEvent, WakeEvent } from "../src/index.js";
import { ErmrestCatalog, PollingErmrestCatalog } from "../src/index.js";
import type { FakeErmrest } from "../src/testing/index.js";

/** The conditional claim every agent here makes: `queued` → `claimed`, only if still `queued`. */
export const claimQuery = (limit: number) => `/entity/S:Job/state=queued?limit=${limit}`;
export const claimUpdate = "/attributegroup/S:Job/RID,expected:=state;state,owner";

/** Options of {@link startClaimAgents}. */
export interface ClaimAgentsOptions {
  agents: number;
  /** The AMQP address of every agent. */
  amqpServer: string;
  pollingMs: number;
  /** Candidates fetched per claim. Default 50. */
  limit?: number;
  maxRetryDelayMs?: number;
  maxOutageMs?: number;
  /** The logger of every agent. Default silent. */
  logger?: Logger;
  /** `blockingPoll`'s `outageSummaryMs`. Default its own. */
  outageSummaryMs?: number;
  /** Rows one claim takes (`claimRows`). Default 1. */
  claimRows?: number;
  /**
   * Mark each claimed row `complete`: `"row"` with one PUT per row, `"batch"` with one PUT per claimed batch (as
   * the README's agent does). Default none.
   */
  complete?: "row" | "batch";
  /** Every agent's `writePacing`. Default the library's. */
  writePacing?: boolean | "commit-rate" | "turns";
  /** Every agent's `noticeExchange`. Default the library's. */
  noticeExchange?: string;
}

/**
 * `agents` agents claiming queued rows of the fake's `S:Job` one at a time with `spread`, each in its own
 * `blockingPoll`; records every claim (with its time), every outage and recovery, and how each poll ended.
 */
export function startClaimAgents(fake: FakeErmrest, options: ClaimAgentsOptions) {
  const controller = new AbortController();
  setMaxListeners(options.agents + 10, controller.signal);
  const claims = new Map<string, Array<{ agent: number; at: number }>>();
  const outages: Array<OutageEvent & { agent: number; at: number }> = [];
  const recoveries: Array<RecoveredEvent & { agent: number; at: number }> = [];
  const wakes: Array<WakeEvent & { agent: number; at: number }> = [];
  const ended: Array<{ agent: number; error?: unknown }> = [];
  const polls = Array.from({ length: options.agents }, (_, agent) => {
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      amqpServer: options.amqpServer,
      ...(options.writePacing === undefined ? {} : { writePacing: options.writePacing }),
      ...(options.noticeExchange === undefined ? {} : { noticeExchange: options.noticeExchange }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    catalog.on("claimed", ({ batch }) => {
      for (const [candidate] of batch) {
        const rid = candidate.RID as string;
        claims.set(rid, [...(claims.get(rid) ?? []), { agent, at: performance.now() }]);
      }
    });
    catalog.on("outage", (event) => outages.push({ ...event, agent, at: performance.now() }));
    catalog.on("recovered", (event) => recoveries.push({ ...event, agent, at: performance.now() }));
    catalog.on("wake", (event) => wakes.push({ ...event, agent, at: performance.now() }));
    let idleEtag: string | null = null;
    const lookForWork = async () => {
      const result = await catalog.stateChangeOnce(
        claimQuery(options.limit ?? 50),
        claimUpdate,
        (row) => ({ RID: row.RID, expected: "queued", state: "claimed", owner: `agent-${agent}` }),
        idleEtag,
        { spread: true, claimRows: options.claimRows ?? 1 },
      );
      idleEtag = result.idleEtag;
      if (options.complete === "batch" && result.batch.length > 0)
        await catalog.put("/attributegroup/S:Job/RID;state", {
          json: result.batch.map(([job]) => ({ RID: job.RID, state: "complete" })),
        });
      else if (options.complete === "row")
        for (const [job] of result.batch)
          await catalog.put("/attributegroup/S:Job/RID;state", {
            json: [{ RID: job.RID, state: "complete" }],
          });
      return result.batch.length > 0;
    };
    return catalog
      .blockingPoll(lookForWork, {
        pollingMs: options.pollingMs,
        coalesceMs: 20,
        ...(options.maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs: options.maxRetryDelayMs }),
        ...(options.maxOutageMs === undefined ? {} : { maxOutageMs: options.maxOutageMs }),
        ...(options.outageSummaryMs === undefined ? {} : { outageSummaryMs: options.outageSummaryMs }),
        signal: controller.signal,
      })
      .then(
        () => void ended.push({ agent }),
        (error: unknown) => void ended.push({ agent, error }),
      );
  });
  return {
    claims,
    outages,
    recoveries,
    wakes,
    ended,
    /** Rows claimed more than once. */
    doubleClaims: () => [...claims.values()].filter((list) => list.length > 1).length,
    stop: async () => {
      controller.abort();
      await Promise.all(polls);
    },
  };
}

let nextId = 1;

/**
 * Inserts `count` queued rows with a POST, as a writer beside the agents would (retried when the fake answers
 * `503 Transaction aborted.`); resolves with the time after.
 */
export async function insertQueued(fake: FakeErmrest, count: number): Promise<number> {
  const writer = new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
  const rows = Array.from({ length: count }, () => ({ id: nextId++, state: "queued" }));
  await writer.post("/entity/S:Job", { json: rows });
  return performance.now();
}
