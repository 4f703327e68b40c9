import { setMaxListeners } from "node:events";
import type { Logger } from "@x/core";
import type { OutageEvent } from "../src/index.js";
import { leaseClaim, PollingErmrestCatalog, type Row } from "../src/index.js";
import type { FakeErmrest, FakeTableOptions } from "../src/testing/index.js";

/** The table the lease agents work on: `S:Job` with the columns {@link leaseClaim} uses. */
export const leaseJobTable: FakeTableOptions = {
  key: ["id"],
  columns: ["state", "owner", "lease_until", "result"],
  types: { id: "int4", lease_until: "timestamptz" },
};

/** Options of {@link startLeaseAgents}. */
export interface LeaseAgentsOptions {
  agents: number;
  leaseMs: number;
  pollingMs: number;
  /** Every agent's `writePacing`. Default the library's. */
  writePacing?: boolean | "commit-rate" | "turns";
  /** The logger of every agent. Default silent. */
  logger?: Logger;
  /** `blockingPoll`'s `maxRetryDelayMs`. Default its own. */
  maxRetryDelayMs?: number;
}

/**
 * `agents` agents running the README's main loop on the fake's `S:Job` (see {@link leaseJobTable}): claim up to
 * 10 queued rows with a lease (or, with none queued, rows whose lease ran out), complete the batch with one PUT
 * that applies only while the agent still holds the rows. Records each agent's completions and outages, and
 * how each poll ended.
 */
export function startLeaseAgents(fake: FakeErmrest, options: LeaseAgentsOptions) {
  const controller = new AbortController();
  setMaxListeners(options.agents + 10, controller.signal);
  const completed = Array.from({ length: options.agents }, () => 0);
  const outages: Array<OutageEvent & { agent: number }> = [];
  const recoveries: number[] = [];
  const ended: Array<{ agent: number; error?: unknown }> = [];
  const polls = Array.from({ length: options.agents }, (_, agent) => {
    const owner = `agent-${agent}`;
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      ...(options.writePacing === undefined ? {} : { writePacing: options.writePacing }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    catalog.on("outage", (event) => outages.push({ ...event, agent }));
    catalog.on("recovered", () => recoveries.push(agent));
    const lease = leaseClaim({ table: "S:Job", owner, leaseMs: options.leaseMs });
    let idleEtag: string | null = null;
    const claim = (path: string, etag: string | null) =>
      catalog.stateChangeOnce(path, lease.updatePath, lease.transform, etag, { spread: true });
    const lookForWork = async () => {
      const ready = await claim(lease.queryPath, idleEtag);
      idleEtag = ready.idleEtag;
      const { batch } = ready.batch.length > 0 ? ready : await claim(lease.expiredPath, null);
      const done: Row[] = batch.map(([job]) => ({
        RID: job.RID,
        mine: owner,
        state: "complete",
        result: owner,
      }));
      if (done.length > 0) {
        const answer = await catalog.put("/attributegroup/S:Job/RID,mine:=owner;state,result", {
          json: done,
        });
        completed[agent] = (completed[agent] as number) + (answer.json() as unknown[]).length;
      }
      return batch.length > 0;
    };
    return catalog
      .blockingPoll(lookForWork, {
        pollingMs: options.pollingMs,
        coalesceMs: 20,
        ...(options.maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs: options.maxRetryDelayMs }),
        signal: controller.signal,
      })
      .then(
        () => void ended.push({ agent }),
        (error: unknown) => void ended.push({ agent, error }),
      );
  });
  return {
    completed,
    outages,
    recoveries,
    ended,
    stop: async () => {
      controller.abort();
      await Promise.all(polls);
    },
  };
}
