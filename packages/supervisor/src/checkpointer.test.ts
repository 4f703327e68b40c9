import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { recordingLogger } from "../../../test-support/recording-logger.js";
import { tempDir } from "../test/helpers.js";
import { Checkpointer } from "./checkpointer.js";
import { SupervisorStorage } from "./storage.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const mib = 1024 * 1024;

describe("Checkpointer", () => {
  it("starts an oversized WAL over by pausing writes that never pause by themselves", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const path = join(t.dir, "state.db");
    const storage = SupervisorStorage.open(path);
    cleanups.push(() => storage.close());
    storage.db.pragma("wal_autocheckpoint = 0");
    storage.db.pragma(`journal_size_limit = ${mib}`); // as the daemon does (64 MiB there)
    storage.db.exec("CREATE TABLE blobs (data BLOB NOT NULL)");
    const log = recordingLogger();
    const walCapBytes = 2 * mib;
    let paused: Promise<void> | undefined;
    let pauses = 0;
    const checkpointer = new Checkpointer({
      path,
      intervalMs: 20,
      walCapBytes,
      logger: log.logger,
      pauseWrites: (until) => {
        pauses++;
        paused = until.finally(() => (paused = undefined));
      },
      onFailure: () => {},
    });
    cleanups.push(() => checkpointer.stop());

    // Commit back to back, so a checkpoint always finds new frames behind it, yielding only to take the
    // thread's reports and to honour a pause; until the WAL file was cut back twice or 256 MiB went through.
    const insert = storage.db.prepare("INSERT INTO blobs (data) VALUES (randomblob(8192))");
    const walPath = `${path}-wal`;
    let written = 0;
    let walSize = 0;
    let cutsBelowCap = 0; // the file shrinks when the writer starts the WAL over (to journal_size_limit)
    while (written < 256 * mib && cutsBelowCap < 2) {
      if (paused) await paused;
      const sliceEnd = performance.now() + 50;
      while (performance.now() < sliceEnd) {
        insert.run();
        written += 8192;
        const size = statSync(walPath).size;
        if (walSize > walCapBytes && size < walCapBytes) cutsBelowCap++;
        walSize = size;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }

    expect(cutsBelowCap).toBe(2);
    expect(pauses).toBeGreaterThanOrEqual(2);
    const restarts = log.records.filter((r) => r.msg.includes("RESTART checkpoint"));
    expect(restarts.length).toBeGreaterThanOrEqual(2);
    expect(restarts[0]).toMatchObject({ level: "info", fields: { restarted: true } });
    expect(restarts[0]!.fields.walBytes).toBeGreaterThan(walCapBytes);
  });
});
