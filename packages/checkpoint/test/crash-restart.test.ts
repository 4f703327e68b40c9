// A process killed with SIGKILL in the middle of a downtime, and a new process on the same SQLite file:
// the new one starts paused, before it pulls a single record, and recovers with the saved offsets.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { testTempDir } from "@x/test-support/temp-dir";
import { expect, it, onTestFinished } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * Starts a child Node on a module script and collects its stdout lines. The child gets SIGKILL when the
 * current test finishes; Vitest runs `onTestFinished` callbacks in reverse order of registration, so that
 * happens before the test's directory, made earlier, is removed.
 */
function start(script: string) {
  const child = spawn(
    process.execPath,
    ["--conditions=@x/source", "--import", tsx, "--input-type=module", "-e", script],
    {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  onTestFinished(() => {
    child.kill("SIGKILL");
  });
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

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

  const first = start(`${common(file)}
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

  const second = start(`${common(file)}
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
