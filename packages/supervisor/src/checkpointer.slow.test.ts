import { statSync } from "node:fs";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../test/helpers.js";
import { Checkpointer } from "./checkpointer.js";
import { SupervisorStorage } from "./storage.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const mib = 1024 * 1024;

/**
 * A file database with auto-checkpoints off and a `journal_size_limit` of 1 MiB (as the daemon sets
 * 64 MiB), a Checkpointer on it, and a writer that commits back to back (so a checkpoint always finds new
 * frames behind it) and honours the Checkpointer's write pauses, as the daemon does.
 */
function sustainedWriter(walCapBytes: number, lockWaitMs: number) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const path = join(t.dir, "state.db");
  const storage = SupervisorStorage.open(path);
  cleanups.push(() => storage.close());
  storage.db.pragma("wal_autocheckpoint = 0");
  storage.db.pragma(`journal_size_limit = ${mib}`);
  storage.db.exec("CREATE TABLE blobs (data BLOB NOT NULL)");
  const log = recordingLogger();
  let paused: Promise<void> | undefined;
  let pauses = 0;
  const pauseLengths: number[] = [];
  const checkpointer = new Checkpointer({
    path,
    intervalMs: 20,
    walCapBytes,
    lockWaitMs,
    logger: log.logger,
    pauseWrites: (until) => {
      pauses++;
      paused = until.finally(() => (paused = undefined));
    },
    onFailure: () => {},
    onPause: (pausedMs) => pauseLengths.push(pausedMs),
  });
  cleanups.push(() => checkpointer.stop());
  const insert = storage.db.prepare("INSERT INTO blobs (data) VALUES (randomblob(8192))");
  const walPath = `${path}-wal`;
  let walSize = 0;
  let cuts = 0; // the file shrinks below the cap when the writer starts the WAL over (journal_size_limit)

  return {
    path,
    restarts: () => log.records.filter((r) => r.msg.includes("RESTART checkpoint")),
    pauses: () => pauses,
    /** The lengths `onPause` reported (the metrics' `x_supervisor_checkpoint_pause_seconds`), ms. */
    pauseLengths: () => pauseLengths,
    cuts: () => cuts,
    /** Writes in slices of `sliceMs`, yielding `gapMs` between them, until `done()` or 256 MiB. */
    async writeUntil(done: () => boolean, sliceMs = 50, gapMs = 0): Promise<void> {
      for (let written = 0; written < 256 * mib && !done(); ) {
        if (paused) await paused;
        const sliceEnd = performance.now() + sliceMs;
        while (performance.now() < sliceEnd) {
          insert.run();
          written += 8192;
          const size = statSync(walPath).size;
          if (walSize > walCapBytes && size < walCapBytes) cuts++;
          walSize = size;
        }
        await new Promise((resolve) => (gapMs > 0 ? setTimeout(resolve, gapMs) : setImmediate(resolve)));
      }
    },
  };
}

describe("Checkpointer", () => {
  it("starts an oversized WAL over by pausing writes that never pause by themselves", async () => {
    const walCapBytes = 2 * mib;
    const writer = sustainedWriter(walCapBytes, 1_000);
    await writer.writeUntil(() => writer.cuts() >= 2);

    expect(writer.cuts()).toBe(2);
    expect(writer.pauses()).toBeGreaterThanOrEqual(2);
    const restarts = writer.restarts();
    expect(restarts.length).toBeGreaterThanOrEqual(2);
    expect(restarts[0]).toMatchObject({ level: "info", fields: { restarted: true } });
    expect(restarts[0]!.fields.walBytes).toBeGreaterThan(walCapBytes);
    // onPause reports each pause once it ended, with the length the log line gives.
    expect(writer.pauseLengths().length).toBe(restarts.length);
    expect(writer.pauseLengths().map(Math.round)).toEqual(restarts.map((r) => r.fields.pausedMs));
  });

  it("backs off while a reader holds an old snapshot, and starts the WAL over once it is gone", async () => {
    const writer = sustainedWriter(mib, 50);
    // A reader in a transaction on the empty WAL: no checkpoint can copy anything, no RESTART can finish.
    const reader = new Database(writer.path, { readonly: true });
    cleanups.push(() => reader.close());
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM blobs").get();

    // 1.2 s of writes at a fifth of full speed: each failed RESTART doubles the size for the next attempt,
    // so a few pauses (≈ log2 of the WAL's growth), where one per checkpoint tick would be about fifteen.
    const until = performance.now() + 1_200;
    await writer.writeUntil(() => performance.now() > until, 2, 8);
    const held = writer.restarts();
    expect(held.length).toBeGreaterThanOrEqual(1);
    expect(held.every((r) => r.fields.restarted === false)).toBe(true);
    expect(writer.pauses()).toBeLessThanOrEqual(10);
    expect(writer.cuts()).toBe(0);

    reader.exec("COMMIT");
    await writer.writeUntil(() => writer.cuts() >= 1);
    expect(writer.restarts().at(-1)).toMatchObject({ fields: { restarted: true } });
    // ≈ 15 s on a quiet 2-core machine (the backed-off RESTART waits for the WAL to grow again); twice that
    // under load, beyond the default 30 s.
  }, 120_000);
});
