import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { SupervisorClient } from "../src/index.js";
import { serve } from "./cli-process.js";
import { paths } from "./harness.js";
import { readDb } from "./helpers.js";

async function writeLines(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < count; i += 10_000) {
    let chunk = "";
    for (let j = i; j < Math.min(count, i + 10_000); j++)
      chunk += `pkg${String(j).padStart(7, "0")} 1.${j} 2.${j}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

/** The consistency every database must show after a crash. */
function checkConsistency(db: string) {
  readDb(db, (d) => {
    expect(d.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(d.pragma("foreign_key_check")).toEqual([]);
    expect(
      d
        .prepare(
          `SELECT count(*) AS n FROM queue LEFT JOIN log USING (attr_path)
           WHERE last_started IS NOT started`,
        )
        .get(),
    ).toEqual({ n: 0 });
  });
}

describe("SIGKILL of the daemon (D9)", () => {
  it("mid-ingest: committed batches survive, the run stays incomplete, the next start reads it again", async () => {
    const p = paths();
    const total = 150_000;
    await writeLines(join(p.fetchersDir, "big.1.txt"), total);
    const first = serve(p);
    const rows = () => {
      try {
        return readDb(p.db, (d) => (d.prepare("SELECT count(*) AS n FROM queue").get() as { n: number }).n);
      } catch {
        return 0; // not created yet
      }
    };
    await waitFor(() => rows() > 0, 30_000, "the first committed batch");
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(137);
    const committed = rows();
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(total);
    checkConsistency(p.db);
    expect(readDb(p.db, (d) => d.prepare("SELECT is_complete FROM fetcher_runs").all())).toEqual([
      { is_complete: 0 },
    ]);

    const second = serve(p);
    await waitFor(() => second.stderr().includes("listening"), 60_000, "the restarted daemon");
    expect(rows()).toBe(total);
    expect(readDb(p.db, (d) => d.prepare("SELECT is_complete FROM fetcher_runs").all())).toEqual([
      { is_complete: 1 },
    ]);
    checkConsistency(p.db);
  }, 120_000);

  it("mid-dispatch: every received job is recorded as started, every acknowledged DONE as finished; none is dispatched twice", async () => {
    const p = paths();
    const total = 3_000;
    await writeLines(join(p.fetchersDir, "f.1.txt"), total);
    const first = serve(p);
    await waitFor(() => first.stderr().includes("listening"), 30_000, "the daemon");
    const received = new Set<string>();
    const acknowledged = new Set<string>();
    const worker = async () => {
      try {
        const client = await SupervisorClient.connect(p.socket);
        let job = await client.ready();
        while (job) {
          received.add(job.attrPath);
          const finished = job.attrPath;
          job = await client.done(finished, 0);
          acknowledged.add(finished);
        }
      } catch {
        // the daemon was killed
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await waitFor(() => received.size >= 300, 30_000, "jobs dispatched");
    first.child.kill("SIGKILL");
    await Promise.all(workers);
    expect(received.size).toBeLessThan(total);
    checkConsistency(p.db);
    const log = new Map(
      readDb(
        p.db,
        (d) =>
          d.prepare("SELECT attr_path, started, finished FROM log").all() as Array<{
            attr_path: string;
            started: number;
            finished: number | null;
          }>,
      ).map((r) => [r.attr_path, r]),
    );
    for (const path of received) expect(log.get(path)?.started).toEqual(expect.any(Number));
    for (const path of acknowledged) expect(log.get(path)?.finished).toEqual(expect.any(Number));

    const second = serve(p);
    await waitFor(() => second.stderr().includes("listening"), 30_000, "the restarted daemon");
    const client = await SupervisorClient.connect(p.socket);
    const after = new Set<string>();
    for (let job = await client.ready(); job; job = await client.done(job.attrPath, 0))
      after.add(job.attrPath);
    await client.close();
    const redispatched = [...after].filter((path) => log.has(path));
    expect(redispatched).toEqual([]);
    // every line was dispatched exactly once: before the kill, after it, or lost in transit (parity: in flight)
    expect(log.size + after.size).toBe(total);
    expect(received.size).toBeLessThanOrEqual(log.size);
    checkConsistency(p.db);
  });
});
