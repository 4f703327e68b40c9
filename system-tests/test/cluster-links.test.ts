import { networkNamespacesAllowed, startNetworkNamespace } from "@x/test-support/netns";
import { startTcpProxy, type TcpProxy } from "@x/test-support/tcp-proxy";
import { describe, it, onTestFinished } from "vitest";
import { clusterPerFile, startStack, verdict, writeUntil } from "./cluster-stack.js";

/*
 * Link and process faults on a 3-node cluster of quorum queues: one server's and one client's links cut
 * for 30 s (a black hole in the fault proxy: no close, no reset, peers notice by their heartbeats), a server
 * in a network namespace of its own whose link goes down for 30 s (where the machine allows namespaces), and
 * an active server killed with SIGKILL in the middle of its batches while its standby takes over. Item counts
 * are scaled to keep every system test together within 12 minutes (see docs/reliability.md).
 */
const CUT_ITEMS = 50_000;
const NETNS_ITEMS = 50_000;
const SERVER_KILL_ITEMS = 50_000;
const CUT_MS = 30_000;

const files = clusterPerFile("links");

/**
 * One fault proxy per node, listening on `host` (default 127.0.0.1), closed when the test finishes: a process
 * whose every link can be cut at once, or the relays that a network namespace reaches the nodes through.
 */
async function proxies(urls: readonly string[], host?: string): Promise<TcpProxy[]> {
  const list = await Promise.all(urls.map((url) => startTcpProxy(url, { host })));
  onTestFinished(() => Promise.all(list.map((proxy) => proxy.close())).then(() => {}));
  return list;
}

describe("a 3-node RabbitMQ cluster with quorum queues", () => {
  it("a server's and a client's links cut for 30 s lose and double nothing", async () => {
    const cluster = files.cluster();
    const [serverLinks, clientLinks] = [await proxies(cluster.urls), await proxies(cluster.urls)];
    const stack = await startStack(cluster, files.dir(), "cut", {
      serverA: serverLinks.map((proxy) => proxy.url),
      client0: clientLinks.map((proxy) => proxy.url),
    });
    const writers = await writeUntil(stack, "links cut 30 s", CUT_ITEMS, CUT_ITEMS / 5);
    const faultAt = performance.now();
    for (const link of [...serverLinks, ...clientLinks]) link.blackHole(true);
    await new Promise((resolve) => setTimeout(resolve, CUT_MS));
    const healedAt = performance.now();
    for (const link of [...serverLinks, ...clientLinks]) link.blackHole(false);
    await writers.done;
    await verdict("links cut 30 s", writers, stack.file, [...stack.active, ...stack.standbys], {
      "other clients recovered ms": writers.recoveryMs(faultAt, [1, 2, 3]),
      "the cut client's first confirmation after the link came back ms": writers.firstConfirmedMs(
        healedAt,
        [0],
      ),
    });
  }, 600_000);

  it.skipIf(!networkNamespacesAllowed())(
    "a server in its own network namespace, its link down for 30 s, loses and doubles nothing",
    async () => {
      const cluster = files.cluster();
      const netns = await startNetworkNamespace();
      onTestFinished(() => netns.close());
      // Server A runs inside; it reaches each node through a relay on the host's end of the link.
      const relays = await proxies(cluster.urls, netns.hostAddress);
      const stack = await startStack(cluster, files.dir(), "netns", {
        serverA: relays.map((relay) => relay.url),
        serverAExec: netns.exec,
      });
      const writers = await writeUntil(stack, "server link down 30 s", NETNS_ITEMS, NETNS_ITEMS / 5);
      const faultAt = performance.now();
      await netns.link(false);
      await new Promise((resolve) => setTimeout(resolve, CUT_MS));
      await netns.link(true);
      await writers.done;
      await verdict("server link down 30 s", writers, stack.file, [...stack.active, ...stack.standbys], {
        "time to recover ms": writers.recoveryMs(faultAt),
      });
    },
    600_000,
  );

  it("SIGKILL of an active server mid-batch: its standby takes over, nothing lost or doubled", async () => {
    const stack = await startStack(files.cluster(), files.dir(), "kill");
    const writers = await writeUntil(
      stack,
      "active server SIGKILL",
      SERVER_KILL_ITEMS,
      SERVER_KILL_ITEMS / 4,
    );
    const faultAt = performance.now();
    await stack.active[1].kill();
    await writers.done;
    await verdict("active server SIGKILL", writers, stack.file, [...stack.active, ...stack.standbys], {
      "time to recover ms": writers.recoveryMs(faultAt),
    });
  }, 600_000);
});
