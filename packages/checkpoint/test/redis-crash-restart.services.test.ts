// A process killed with SIGKILL while a Redis stream is paused for a downtime, and a new process on the same
// SQLite file: the new stream is paused before it reads anything and replays from the checkpointed id.
import { join } from "node:path";
import { requireService } from "@x/test-support/services";
import { testTempDir } from "@x/test-support/temp-dir";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { createClient } from "redis";
import { beforeAll, expect, it, onTestFinished } from "vitest";
import { startScript } from "./child-script.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const line = (lines: string[], prefix: string) =>
  waitFor(() => lines.find((candidate) => candidate.startsWith(prefix)), 60_000, `a line ${prefix}`);

/** The consumer both processes run: the dependency stalls after record 99, threshold 100 s, 1 s per record. */
const consumer = (file: string, key: string) => `
  import { createClient } from "redis";
  import { Checkpoint, Dependency, SqliteCache } from "@x/checkpoint";
  import { redisStream } from "@x/checkpoint/redis";
  const at = (i) => new Date(Date.UTC(2025, 0, 1) + i * 1_000);
  const client = await createClient({ url: ${JSON.stringify(REDIS_URL)} }).connect();
  const stream = redisStream({ client, key: ${JSON.stringify(key)}, blockMs: 100 });
  const cp = new Checkpoint("orders", {
    dependent: stream,
    dependencies: [new Dependency("prices", { downtimeThresholdMs: 100_000 })],
    cache: new SqliteCache(${JSON.stringify(file)}),
    recoveryCallback: (_cp, dep) => stream.seek(dep.checkpointState.id),
  });
  const seen = [];
  let recovered = false;
  cp.on("down", () => console.log("down " + seen.at(-1) + " " + stream.deliveries));
  const loop = (async () => {
    for await (const record of stream) {
      const i = Number(record.fields.i);
      seen.push(i);
      if (i < 100 || recovered) await cp.heartbeat(at(i));
      await cp.checkPulse(at(i), { id: record.id });
      if (i === 999) break;
    }
  })();
`;

beforeAll(() => requireService("Redis", REDIS_URL));

it("a process killed during the pause: the next one starts paused, reads nothing, and replays from the checkpoint", async () => {
  const file = join(testTempDir("x-checkpoint-redis-crash-"), "checkpoints.db");
  const key = uniqueName("orders");
  const client = await createClient({ url: REDIS_URL }).connect();
  onTestFinished(async () => {
    await client.del(key);
    client.destroy();
  });
  await Promise.all(Array.from({ length: 1_000 }, (_, i) => client.xAdd(key, "*", { i: String(i) })));

  const first = startScript(`${consumer(file, key)}
    cp.once("down", async () => {
      await cp.heartbeat(at(50)); // a late price: snapshots the id at detection
      console.log("snapshot " + JSON.stringify(cp.dependency("prices").checkpointState));
    });
    setInterval(() => {}, 1_000);
  `);
  expect(await line(first.lines, "down ")).toMatch(/^down 200 \d+$/);
  const snapshot = await line(first.lines, "snapshot ");
  first.child.kill("SIGKILL");
  await first.exited;

  const second = startScript(`${consumer(file, key)}
    console.log("restarted " + stream.paused);
    await new Promise((resolve) => setTimeout(resolve, 500));
    console.log("while paused " + stream.deliveries + " " + seen.length);
    recovered = true;
    await cp.heartbeat(at(201));
    await loop;
    console.log("replayed " + seen[0] + " " + seen.at(-1) + " " + seen.length + " " + seen.every((i, n) => i === 200 + n));
    await client.quit();
    process.exit(0);
  `);
  expect(await line(second.lines, "restarted ")).toBe("restarted true");
  expect(await line(second.lines, "while paused ")).toBe("while paused 0 0");
  expect(await line(second.lines, "replayed ")).toBe("replayed 200 999 800 true");
  expect(await second.exited).toBe(0);
  const ids = await client.xRange(key, "-", "+", { COUNT: 201 });
  expect(snapshot).toBe(`snapshot ${JSON.stringify({ id: ids?.[200]?.id })}`);
});
