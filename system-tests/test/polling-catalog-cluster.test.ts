import { setMaxListeners } from "node:events";
import { type AmqpEvent, ErmrestCatalog, PollingErmrestCatalog, type WakeReason } from "@x/polling-catalog";
import { startFakeErmrest } from "@x/polling-catalog/testing";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { clusterPerFile } from "./cluster-stack.js";

/*
 * @x/polling-catalog agents on a 3-node RabbitMQ cluster: every agent is given the three nodes, the first
 * one first, so all of them bind there; that node is killed (kill -9) while rows keep coming. With a
 * polling period of 60 s, only change notices (and the drain that follows each re-bind) can explain claims
 * within seconds: the agents must be back on notices from another node.
 */
const AGENTS = 4;
const POLLING_MS = 60_000;
/** Rows inserted before the kill (a warm-up through the first node), then one every 100 ms for 3 s from it. */
const ROWS_BEFORE = 20;
const ROWS_AFTER = 30;

const files = clusterPerFile("catalog");

interface Claim {
  agent: number;
  at: number;
  /** Why the drain that made the claim ran. */
  reason: WakeReason;
}

describe("polling-catalog agents on a 3-node RabbitMQ cluster", () => {
  it("whose node dies (kill -9) are back on notices from another node, with no row claimed twice", async () => {
    const cluster = files.cluster();
    const [first, second, third] = cluster.nodes;
    if (!first || !second || !third) throw new Error("expected three nodes");
    const noticeExchange = uniqueName("pc-cluster");
    // ERMrest's side publishes through the third node, which stays up.
    const fake = await startFakeErmrest({
      tables: { "S:Job": { key: ["id"], columns: ["state", "owner"], types: { id: "int4" } } },
      amqpUrl: third.url,
      noticeExchange,
    });
    onTestFinished(() => fake.close());
    const address = { scheme: "http", server: fake.server, catalogId: fake.catalogId } as const;
    const writer = new ErmrestCatalog(address);
    let nextId = 1;
    const insert = async (count: number) => {
      const rows = Array.from({ length: count }, () => ({ id: nextId++, state: "queued" }));
      await writer.post("/entity/S:Job", { json: rows });
    };
    const states = async () => {
      const rows = (await writer.get("/entity/S:Job")).json() as Array<{ state: string }>;
      return rows.map((row) => row.state);
    };

    const controller = new AbortController();
    setMaxListeners(AGENTS + 10, controller.signal);
    const claims = new Map<string, Claim[]>();
    const amqp: Array<AmqpEvent & { agent: number; at: number }> = [];
    const wakes: Array<{ agent: number; at: number; reason: WakeReason }> = [];
    const polls = Array.from({ length: AGENTS }, (_, agent) => {
      const catalog = new PollingErmrestCatalog({ ...address, amqpServer: cluster.urls, noticeExchange });
      let reason: WakeReason = "start";
      catalog.on("wake", (event) => {
        reason = event.reason;
        wakes.push({ agent, at: performance.now(), reason });
      });
      catalog.on("amqp", (event) => amqp.push({ ...event, agent, at: performance.now() }));
      catalog.on("claimed", ({ batch }) => {
        for (const [row] of batch) {
          const rid = row.RID as string;
          claims.set(rid, [...(claims.get(rid) ?? []), { agent, at: performance.now(), reason }]);
        }
      });
      let idleEtag: string | null = null;
      const lookForWork = async () => {
        // The ETag-guarded claim: a row goes to the one agent whose PUT still matches the catalog.
        const result = await catalog.stateChangeOnce(
          "/entity/S:Job/state=queued?limit=5",
          "/attributegroup/S:Job/RID;state,owner",
          (row) => ({ RID: row.RID, state: "claimed", owner: `agent-${agent}` }),
          idleEtag,
        );
        idleEtag = result.idleEtag;
        if (result.batch.length > 0)
          await catalog.put("/attributegroup/S:Job/RID;state", {
            json: result.batch.map(([row]) => ({ RID: row.RID, state: "complete" })),
          });
        return result.batch.length > 0;
      };
      return catalog.blockingPoll(lookForWork, {
        pollingMs: POLLING_MS,
        coalesceMs: 20,
        signal: controller.signal,
      });
    });
    onTestFinished(async () => {
      controller.abort();
      await Promise.allSettled(polls);
    });
    const upAt = (agent: number, after = 0) =>
      amqp.find((event) => event.agent === agent && event.state === "up" && event.at > after);
    const port = (url: string) => new URL(url).port;

    // Every agent binds at the first node; the warm-up rows are claimed through it.
    await waitFor(
      () => Array.from({ length: AGENTS }, (_, agent) => upAt(agent)).every(Boolean),
      30_000,
      "every agent bound",
    );
    for (let agent = 0; agent < AGENTS; agent++) {
      const up = upAt(agent);
      expect(up?.state === "up" && port(up.url)).toBe(String(first.port));
    }
    await insert(ROWS_BEFORE);
    await waitFor(async () => (await states()).every((state) => state === "complete"), 30_000, "the warm-up");
    // A connection lost after 5 s up moves to the next node at once (one lost sooner waits the backoff).
    const lastUp = Math.max(...amqp.map((event) => event.at));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastUp + 5_200 - performance.now())));

    const killAt = performance.now();
    await cluster.kill(first, "SIGKILL");
    const killedMs = performance.now() - killAt;
    for (let i = 0; i < ROWS_AFTER; i++) {
      await insert(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await waitFor(
      async () =>
        (await states()).filter((state) => state === "complete").length === ROWS_BEFORE + ROWS_AFTER,
      30_000,
      "every row complete",
    );

    // Each agent lost the node, bound at another one, and drained on notices again.
    const backMs: number[] = [];
    const noticeClaimMs: number[] = [];
    for (let agent = 0; agent < AGENTS; agent++) {
      const up = upAt(agent, killAt);
      if (up?.state !== "up") throw new Error(`agent ${agent} did not bind again`);
      expect([String(second.port), String(third.port)]).toContain(port(up.url));
      backMs.push(up.at - killAt);
      const woken = wakes.find((wake) => wake.agent === agent && wake.at > up.at && wake.reason === "notice");
      if (!woken) throw new Error(`agent ${agent} was not woken by a notice after the kill`);
    }
    const afterKill = [...claims.values()].flat().filter((claim) => claim.at > killAt);
    for (const claim of afterKill) if (claim.reason === "notice") noticeClaimMs.push(claim.at - killAt);
    const firstClaimMs = Math.min(...afterKill.map((claim) => claim.at - killAt));
    const firstNoticeClaimMs = Math.min(...noticeClaimMs);
    const doubleClaims = [...claims.values()].filter((list) => list.length > 1).length;
    const left = (await states()).filter((state) => state !== "complete").length;
    const byReason = (reason: WakeReason) => afterKill.filter((claim) => claim.reason === reason).length;
    const range = (values: number[]) =>
      `${(Math.min(...values) / 1_000).toFixed(1)}–${(Math.max(...values) / 1_000).toFixed(1)} s`;
    console.log(
      `[polling-catalog node kill -9] agents ${AGENTS}, rows ${claims.size} (${ROWS_AFTER} after the kill), ` +
        `double claims ${doubleClaims}, left ${left}; kill took ${Math.round(killedMs)} ms; ` +
        `bound at another node ${range(backMs)} after the kill; ` +
        `first claim ${(firstClaimMs / 1_000).toFixed(1)} s, first notice-driven claim ` +
        `${(firstNoticeClaimMs / 1_000).toFixed(1)} s after the kill; claims after the kill by wake: ` +
        `notice ${byReason("notice")}, rebind ${byReason("rebind")}, poll-timeout ${byReason("poll-timeout")}`,
    );

    expect(claims.size).toBe(ROWS_BEFORE + ROWS_AFTER);
    expect(doubleClaims).toBe(0);
    expect(left).toBe(0);
    // Polling cannot explain any of it: no poll came due.
    expect(wakes.filter((wake) => wake.reason === "poll-timeout")).toEqual([]);
    expect(Math.max(...backMs)).toBeLessThan(5_000);
    expect(firstNoticeClaimMs).toBeLessThan(5_000);
    expect(byReason("notice")).toBeGreaterThan(0);
  }, 120_000);
});
