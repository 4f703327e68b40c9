import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { waitFor } from "@x/test-support/wait-for";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { openSqliteStorage, RmqStorageClient } from "../src/index.js";
import { bigContentCall, cliCommand, sandbox, serveArgs } from "./stack.js";

const box = sandbox("signals");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

const parentScript = fileURLToPath(new URL("./forwarding-parent.mjs", import.meta.url));

/** Whether any process of a process group is still alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The forwarding parent, leader of a process group of its own, with serve as its child in that group. */
async function startGroup(
  serveArgs: string[],
): Promise<{ parent: ChildProcess; stdout: () => string; stderr: () => string }> {
  const parent = spawn(process.execPath, [parentScript, ...serveArgs], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pgid = parent.pid as number;
  onTestFinished(() => {
    if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
  });
  let stdout = "";
  let stderr = "";
  parent.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  parent.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitFor(
    () => stdout.split("\n").includes("ready") || parent.exitCode !== null,
    60_000,
    `serve's ready line (stderr: ${stderr})`,
  );
  if (parent.exitCode !== null) throw new Error(`serve did not start: ${stderr}`);
  return { parent, stdout: () => stdout, stderr: () => stderr };
}

describe("Ctrl-C in a terminal (SIGINT to the whole group) with a parent that forwards SIGTERM", () => {
  for (const processes of [1, 2])
    it(`serve --processes ${processes} stops gracefully, exits 0, and keeps every acknowledged write`, async () => {
      const [file, prefix] = [box.file(), box.prefix()];
      const { parent, stdout, stderr } = await startGroup([
        ...serveArgs(`sqlite:${file}`, prefix),
        "--processes",
        String(processes),
      ]);
      const local = await openSqliteStorage(file);
      onTestFinished(() => local.close());
      const client = await RmqStorageClient.connect({
        url: AMQP_URL,
        storage: local,
        prefix,
        waitMinMs: 5_000,
        waitPerBatchMs: 0,
      });
      onTestFinished(() => client.close());
      // Writes in flight when the signals arrive: each resolves true only once committed.
      const calls = Array.from({ length: 30 }, () => bigContentCall(2_000)[1] as Map<string, bigint>);
      let acknowledged = 0;
      const results = calls.map((map) =>
        client.contentAdd(map).then((ok) => {
          if (ok) acknowledged++;
          return ok;
        }),
      );
      await waitFor(() => acknowledged > 0, 60_000, "a first acknowledged write");
      const pgid = parent.pid as number;
      process.kill(-pgid, "SIGINT");
      const [code] = await once(parent, "exit");
      expect(stdout()).toContain("serve exited 0");
      expect(code).toBe(0);
      expect(stderr()).toContain("stopped");
      expect(stderr()).not.toContain("ERROR");
      await waitFor(() => !groupAlive(pgid), 30_000, "every process of the group to exit");
      const outcomes = await Promise.all(results);
      const stored = await local.entityGetAll("content");
      for (const [i, ok] of outcomes.entries())
        if (ok) for (const id of calls[i]?.keys() ?? []) expect(stored.has(id)).toBe(true);
      expect(outcomes.filter((ok) => ok).length).toBeGreaterThan(0);
      expect(existsSync(file)).toBe(true);
    }, 120_000);
});

describe("a stop request sent as two signals, the pid's then the group's (timeout(1))", () => {
  it("serve stops gracefully and exits 0", async () => {
    // SIGALRM makes timeout(1) act as at its deadline: SIGTERM to serve, then to its whole group.
    // --preserve-status: timeout exits with serve's status, 0 after a graceful stop, 143 after a forced one.
    const serve = [
      process.execPath,
      ...cliCommand("serve", ...serveArgs(`sqlite:${box.file()}`, box.prefix())),
    ];
    const timeout = spawn("timeout", ["--preserve-status", "600", ...serve], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pgid = timeout.pid as number;
    onTestFinished(() => {
      if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
    });
    let [stdout, stderr] = ["", ""];
    timeout.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    timeout.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(timeout, "exit");
    await waitFor(
      () => stdout.split("\n").includes("ready") || timeout.exitCode !== null,
      60_000,
      `serve's ready line (stderr: ${stderr})`,
    );
    timeout.kill("SIGALRM");
    const [code] = await exited;
    expect(code).toBe(0);
    expect(stderr).toContain("stopping gracefully");
    expect(stderr).not.toContain("ERROR");
  }, 120_000);
});
