// A process killed with SIGKILL in the middle of a downtime, and a new process on the same SQLite file:
// the new one starts paused, before it pulls a single record, and recovers with the saved offsets.
import { join } from "node:path";
import { testTempDir } from "@x/test-support/temp-dir";
import { expect, it } from "vitest";
import { startScript } from "./child-script.js";

async function waitForLine(lines: string[], prefix: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = lines.find((candidate) => candidate.startsWith(prefix));
    if (line) return line;
    if (Date.now() > deadline)
      throw new Error(`no line starting with ${prefix}; got ${JSON.stringify(lines)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const common = (file: string) => `
  import { Checkpoint, Dependency, SqliteCache, pausable } from "@x/checkpoint";
  const at = (m) => new Date(Date.UTC(2025, 0, 1, 10, m));
  const cache = new SqliteCache(${JSON.stringify(file)});
`;

it("a restart after SIGKILL during a downtime is paused before the first record and recovers the offsets", async () => {
  const dir = testTempDir("x-checkpoint-crash-");
  const file = join(dir, "checkpoints.db");

  const first = startScript(`${common(file)}
    const cp = new Checkpoint("orders", { dependencies: [new Dependency("prices")], cache });
    await cp.checkPulse(at(0), { offset: 100 });
    await cp.heartbeat(at(1));
    await cp.checkPulse(at(12), { offset: 112 });
    console.log("down " + cp.dependency("prices").isDown);
    setInterval(() => {}, 1_000);
  `);
  expect(await waitForLine(first.lines, "down ")).toBe("down true");
  first.child.kill("SIGKILL");
  await first.exited;

  const second = startScript(`${common(file)}
    let pulled = 0;
    async function* records() { for (let offset = 113; offset < 116; offset++) { pulled++; yield offset; } }
    const dependent = pausable(records());
    const cp = new Checkpoint("orders", {
      dependent,
      dependencies: [new Dependency("prices")],
      cache,
      recoveryCallback: (_cp, dep) => console.log("reprocess " + JSON.stringify(dep.checkpointState)),
    });
    const first = dependent.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    console.log("restarted " + JSON.stringify({ paused: dependent.paused, pulled, state: cp.state }));
    await cp.heartbeat(at(13));
    console.log("resumed " + JSON.stringify({ paused: dependent.paused, first: (await first).value }));
    await cache.close();
  `);
  expect(await second.exited).toBe(0);
  expect(second.lines).toEqual([
    `restarted ${JSON.stringify({ paused: true, pulled: 0, state: { offset: 112 } })}`,
    `reprocess ${JSON.stringify({ offset: 112 })}`,
    `resumed ${JSON.stringify({ paused: false, first: 113 })}`,
  ]);
});
