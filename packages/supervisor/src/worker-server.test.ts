import { EventEmitter, once } from "node:events";
import { createRequire } from "node:module";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it, onTestFinished } from "vitest";
import { paths, RawConnection } from "../test/harness.js";
import { type DaemonContext, newStats } from "./events.js";
import { FetcherDirectory } from "./fetcher-directory.js";
import { SupervisorStorage } from "./storage.js";
import { WorkerServer } from "./worker-server.js";

/**
 * A server on a real socket and database, with one queued job, and its events on an emitter; all closed when
 * the current test finishes.
 */
async function serve() {
  const p = paths();
  const storage = SupervisorStorage.open(p.db);
  onTestFinished(() => storage.close());
  storage.upgrade();
  storage.upsertFetcherRun("f", 1, true);
  storage.enqueue("f", 1, [["hello", "1.0 1.1"]]);
  const events = new EventEmitter();
  const stats = newStats();
  const context: DaemonContext = {
    logger: recordingLogger().logger,
    stats,
    emit: (event, ...payload) => events.emit(event, ...payload),
  };
  const server = new WorkerServer(
    storage,
    new FetcherDirectory(p.fetchersDir, storage, context),
    context,
    512,
  );
  await server.listen(p.socket, 0o600);
  onTestFinished(() => server.close());
  return { server, storage, events, stats, socket: p.socket };
}

describe("WorkerServer", () => {
  it("leaves require() able to follow pnpm's symlinks once listening (nodejs/node#51142)", async () => {
    // Node's realpath reads the type of the last file stat'ed without the bigint option; a socket there
    // made it stop resolving, so the first require of a package through a pnpm symlink found the link,
    // not the package (chokidar's CommonJS build then misses its sibling 'readdirp').
    await serve();
    const require = createRequire(new URL("../package.json", import.meta.url));
    expect(() => require("chokidar")).not.toThrow();
  });

  it("holds group commits during pauseWrites and serves the queued commands in order after it", async () => {
    const { server, storage, events, stats, socket } = await serve();
    let endPause!: () => void;
    server.pauseWrites(new Promise<void>((resolve) => (endPause = resolve)));
    using worker = await RawConnection.open(socket);
    const rejected = once(events, "reject");
    // The rejected line is parsed after READY on the same stream, so once it is reported READY is queued.
    worker.write("READY\nBOGUS\n");
    await rejected;
    await new Promise((resolve) => setImmediate(resolve)); // after the turn in which a flush would run
    expect(stats.dispatched).toBe(0);
    expect(storage.db.prepare("SELECT count(*) AS n FROM log").get()).toEqual({ n: 0 });

    endPause();
    expect(await worker.next()).toBe("JOB hello 1.0 1.1\n");
    expect(await worker.next()).toBeNull(); // then the connection ends, for BOGUS
    expect(stats.dispatched).toBe(1);
  });
});
