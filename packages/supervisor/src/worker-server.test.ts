import { EventEmitter, once } from "node:events";
import { createRequire } from "node:module";
import { recordingLogger } from "@x/test-support/recording-logger";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { paths, RawConnection } from "../test/harness.js";
import { ConnectionRefusals } from "./connection-refusals.js";
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
  const base: Omit<DaemonContext, "refusals"> = {
    logger: recordingLogger().logger,
    stats,
    emit: (event, ...payload) => events.emit(event, ...payload),
  };
  const context: DaemonContext = { ...base, refusals: new ConnectionRefusals(base) };
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

  it("replies only after a WAL sync started after the commit; a sync releases every commit written before it", async () => {
    const { storage, socket } = await serve();
    storage.enqueue("f", 1, [
      ["world", "2.0 2.1"],
      ["third", "3.0 3.1"],
    ]);
    // the real sync, each one held until the test lets it start
    const gates: Array<() => void> = [];
    const sync = storage.syncWal.bind(storage);
    storage.syncWal = () => new Promise<void>((resolve) => gates.push(resolve)).then(sync);
    onTestFinished(() => {
      for (const open of gates) open(); // so that close() is not left waiting on a failure
    });
    const logged = () => (storage.db.prepare("SELECT count(*) AS n FROM log").get() as { n: number }).n;
    using a = await RawConnection.open(socket);
    using b = await RawConnection.open(socket);
    using c = await RawConnection.open(socket);
    // who was answered, in order (which job each gets follows the jitter)
    const replies: string[] = [];
    const replyA = a.next().then((reply) => replies.push(`a ${reply?.split(" ")[0]}`));
    const replyB = b.next().then((reply) => replies.push(`b ${reply?.split(" ")[0]}`));
    const replyC = c.next().then((reply) => replies.push(`c ${reply?.split(" ")[0]}`));

    a.write("READY\n");
    await waitFor(() => gates.length === 1, 20_000, "the first sync");
    expect(logged()).toBe(1); // committed, and not answered while its sync is held
    b.write("READY\n");
    await waitFor(() => gates.length === 2, 20_000, "the second sync, started while the first is held");
    expect(logged()).toBe(2);
    c.write("READY\n");
    await waitFor(() => logged() === 3, 20_000, "the third group commit");
    expect(gates.length).toBe(2); // two syncs in flight at most: the third commit waits for a later one
    expect(replies).toEqual([]);

    gates[1]!(); // the second sync covers the first commit too
    await replyB;
    expect(replies).toEqual(["a JOB", "b JOB"]);
    await waitFor(() => gates.length === 3, 20_000, "the third sync, once one ended");
    gates[0]!(); // releases nothing more
    gates[2]!();
    await Promise.all([replyA, replyC]);
    expect(replies).toEqual(["a JOB", "b JOB", "c JOB"]);
  });

  it("answers the commands already committed before close() ends their connections", async () => {
    const { server, storage, socket } = await serve();
    let release!: () => void;
    const sync = storage.syncWal.bind(storage);
    storage.syncWal = () => new Promise<void>((resolve) => (release = resolve)).then(sync);
    onTestFinished(() => release?.());
    using worker = await RawConnection.open(socket);
    worker.write("READY\n");
    await waitFor(() => release !== undefined, 20_000, "the sync");
    const closed = server.close();
    release();
    expect(await worker.next()).toBe("JOB hello 1.0 1.1\n");
    expect(await worker.next()).toBeNull();
    await closed;
  });
});
