import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSqliteStorage, RmqStorageServer } from "../src/index.js";
import { sandbox, spawnServer } from "./stack.js";

const box = sandbox("cli");
beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);
afterAll(() => box.cleanup());

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** Runs `x-rmq-storage` (from the sources) to completion. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@x/source", cli, ...args]);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("x-rmq-storage", () => {
  it("prints help with exit 0 and rejects bad command lines with 64 and bad storage with 78", async () => {
    const [help, serveHelp, statsHelp, unknown, noAmqp, noStorage, badFlag, badStorage] = await Promise.all([
      run(["--help"]),
      run(["serve", "--help"]),
      run(["stats", "-h"]),
      run(["launch"]),
      run(["stats"]),
      run(["serve", "--amqp", AMQP_URL]),
      run(["serve", "--amqp", AMQP_URL, "--storage", "sqlite:x", "--colour"]),
      run(["serve", "--amqp", AMQP_URL, "--storage", "mysql://db"]),
    ]);
    expect([help.code, serveHelp.code, statsHelp.code]).toEqual([0, 0, 0]);
    expect(serveHelp.stdout).toContain("--storage SPEC");
    expect(statsHelp.stdout).toContain("--management URL");
    expect([unknown.code, noAmqp.code, noStorage.code, badFlag.code]).toEqual([64, 64, 64, 64]);
    expect(noStorage.stderr).toContain("--storage");
    expect(badStorage.code).toBe(78);
  }, 60_000);

  it("serve --heartbeat takes a duration in seconds or with a suffix, at most 1h; anything else exits 64", async () => {
    const [word, negative, tooLong] = await Promise.all(
      ["soon", "-1", "2h"].map((value) =>
        run(["serve", "--amqp", AMQP_URL, "--storage", "sqlite::memory:", "--heartbeat", value]),
      ),
    );
    expect([word?.code, negative?.code, tooLong?.code]).toEqual([64, 64, 64]);
    expect(word?.stderr).toContain("--heartbeat");
    expect(tooLong?.stderr).toContain("--heartbeat");
    const server = await spawnServer([
      "--amqp",
      AMQP_URL,
      "--storage",
      `sqlite:${box.file()}`,
      "--prefix",
      box.prefix(),
      "--heartbeat",
      "1.5m",
    ]);
    server.child.kill("SIGTERM");
    const [code] = await once(server.child, "exit");
    expect(code).toBe(0);
  }, 60_000);

  it("stats: one JSON line per worker and dead-letter queue, with ready, unacked and consumers", async () => {
    const prefix = box.prefix();
    const missing = await run(["stats", "--amqp", AMQP_URL, "--prefix", box.prefix(), "--json"]);
    expect(missing.code).toBe(0);
    const none = missing.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(none).toHaveLength(165);
    expect(none[0]).toEqual({ queue: expect.any(String), ready: null, unacked: null, consumers: null });

    const server = await RmqStorageServer.start({
      url: AMQP_URL,
      storage: () => openSqliteStorage(":memory:"),
      prefix,
    });
    const { code, stdout } = await run([
      "stats",
      "--amqp",
      AMQP_URL,
      "--prefix",
      prefix,
      "--json",
      "--management",
      "http://127.0.0.1:1",
    ]);
    await server.stop();
    expect(code).toBe(0);
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toHaveLength(165);
    expect(rows).toContainEqual({
      queue: `${prefix}content_add.unknown.0`,
      ready: 0,
      unacked: null,
      consumers: 1,
    });
    expect(rows).toContainEqual({ queue: `${prefix}content.dead`, ready: 0, unacked: null, consumers: 0 });
    const table = await run(["stats", "--amqp", AMQP_URL, "--prefix", prefix]);
    expect(table.stdout.split("\n")[0]).toMatch(/^queue\s+ready\s+unacked\s+consumers$/);
  }, 60_000);

  it("stats exits 1 when the broker cannot be reached", async () => {
    const { code, stderr } = await run(["stats", "--amqp", "amqp://guest:guest@127.0.0.1:1"]);
    expect(code).toBe(1);
    expect(stderr).toContain("cannot connect");
  }, 30_000);
});
