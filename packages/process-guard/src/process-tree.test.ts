import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { cleanupAfterTest } from "../test/helpers.js";
import { pageSize } from "./process-info.js";
import { followProcTree, ProcTreeSampler, scanProcTree, treeRssOf } from "./process-tree.js";

// A Node process whose worker thread starts a child: that child is listed under the worker's task, not the main
// thread's, so following the children files must read every thread's.
const workerSpawns = `
const { Worker } = require("node:worker_threads");
new Worker('require("node:child_process").spawn("sleep", ["30"], { stdio: "ignore" })', { eval: true });
setInterval(() => {}, 1_000);
`;

describe.runIf(process.platform === "linux")("process trees on Linux", () => {
  it("following the children files finds the same processes as scanning all of /proc", async () => {
    // sh, its background sleep, a nested sh with two sleeps, and a multi-threaded node whose worker spawns one
    const script = `sleep 30 & sh -c 'sleep 30 & sleep 30 & wait' & "$0" -e "$WORKER_SPAWNS" & wait`;
    const root = spawn("sh", ["-c", script, process.execPath], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, WORKER_SPAWNS: workerSpawns },
    });
    cleanupAfterTest(root);
    const pid = root.pid!;
    const scanned = await waitFor(
      () => {
        const tree = scanProcTree(pid);
        return tree.size === 7 ? tree : undefined;
      },
      30_000,
      "7 processes in the tree",
    );
    const followed = followProcTree(pid);
    expect([...followed.keys()].sort()).toEqual([...scanned.keys()].sort());
    for (const [child, rss] of followed) {
      expect(rss % pageSize()).toBe(0);
      // the same /proc/<pid>/stat figure; a few pages apart at most while node is settling
      expect(Math.abs(rss - scanned.get(child)!)).toBeLessThan(8 * 1024 * 1024);
    }
    const sum = [...followed.values()].reduce((a, b) => a + b, 0);
    expect(Math.abs((treeRssOf(pid) as number) - sum)).toBeLessThan(16 * 1024 * 1024);
  });

  it("counts our own multi-threaded process and its children", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    cleanupAfterTest(child);
    await waitFor(() => scanProcTree(process.pid).has(child.pid!), 10_000, "the child in the scan");
    const followed = followProcTree(process.pid);
    expect(followed.has(process.pid)).toBe(true);
    expect(followed.has(child.pid!)).toBe(true);
  });

  it("a sampler keeps the tree's files open between samples, drops those of ended processes, and closes", async () => {
    const root = spawn("sh", ["-c", "sleep 30 & sleep 1 & wait"], { detached: true, stdio: "ignore" });
    cleanupAfterTest(root);
    const openFiles = () => readdirSync("/proc/self/fd").length;
    await waitFor(() => scanProcTree(root.pid!).size === 3, 10_000, "sh and its two sleeps");
    const before = openFiles();
    const sampler = new ProcTreeSampler(root.pid!);
    expect(sampler.sample().size).toBe(3);
    expect(openFiles()).toBe(before + 9); // statm, task and children of each single-threaded process
    await waitFor(() => sampler.sample().size === 2, 10_000, "the short sleep to end");
    expect(openFiles()).toBe(before + 6);
    sampler.close();
    expect(openFiles()).toBe(before);
    sampler.close(); // idempotent
  });
});
