import { waitFor } from "@x/test-support/wait-for";
import { describe, it } from "vitest";
import { clusterPerFile, startStack, verdict, writeUntil } from "./cluster-stack.js";

/*
 * Node faults on a 3-node cluster of quorum queues: 4 clients write through 2 active servers, each range
 * with a standby, while a node dies (kill -9) or stops cleanly and comes back. Item counts are scaled to keep
 * every system test together within 12 minutes on a 2-core machine (see docs/reliability.md).
 */
const LEADER_KILL_ITEMS = 200_000;
const CLEAN_STOP_ITEMS = 50_000;

const files = clusterPerFile("nodes");

describe("a 3-node RabbitMQ cluster with quorum queues", () => {
  it("kill -9 of the node leading the quorum queues loses and doubles nothing", async () => {
    const cluster = files.cluster();
    const stack = await startStack(cluster, files.dir(), "leader");
    // The node that leads most of the topology's queues.
    const led = new Map<string, number>();
    for (const node of (await cluster.leaders(stack.prefix)).values())
      if (node) led.set(node.nodename, (led.get(node.nodename) ?? 0) + 1);
    const [leaderName] = [...led].sort((a, b) => b[1] - a[1])[0] ?? [];
    const leader = cluster.nodes.find((node) => node.nodename === leaderName);
    if (!leader) throw new Error("no quorum queue leader found");

    const writers = await writeUntil(stack, "leader kill -9", LEADER_KILL_ITEMS, LEADER_KILL_ITEMS / 4);
    const faultAt = performance.now();
    await cluster.kill(leader, "SIGKILL");
    const confirmedAtFault = writers.confirmed;
    await writers.done;
    // Every queue it led has elected a leader on another node.
    await waitFor(
      async () =>
        [...(await cluster.leaders(stack.prefix)).values()].every((node) => node && node !== leader),
      60_000,
      "new leaders",
    );
    await verdict("leader kill -9", writers, stack.file, [...stack.active, ...stack.standbys], {
      "confirmed before the kill": confirmedAtFault,
      "time to recover ms": writers.recoveryMs(faultAt),
    });
    // The node comes back and rejoins, for the next fault.
    const restartedAt = performance.now();
    await cluster.start(leader);
    console.log(
      `[leader kill -9] the killed node rejoined in ${Math.round(performance.now() - restartedAt)} ms`,
    );
  }, 600_000);

  it("a node stopped cleanly and brought back loses and doubles nothing", async () => {
    const cluster = files.cluster();
    const stack = await startStack(cluster, files.dir(), "stop");
    const node = cluster.nodes[1];
    if (!node) throw new Error("no second node");
    const writers = await writeUntil(stack, "clean stop", CLEAN_STOP_ITEMS, CLEAN_STOP_ITEMS / 4);
    const faultAt = performance.now();
    await cluster.stop(node);
    const stoppedMs = performance.now() - faultAt;
    await writers.reach(CLEAN_STOP_ITEMS / 2);
    const backAt = performance.now();
    await cluster.start(node);
    const restartMs = performance.now() - backAt;
    await writers.done;
    await verdict("clean stop and restart", writers, stack.file, [...stack.active, ...stack.standbys], {
      "stop ms": stoppedMs,
      "time to recover ms": writers.recoveryMs(faultAt),
      "restart ms": restartMs,
    });
  }, 600_000);
});
