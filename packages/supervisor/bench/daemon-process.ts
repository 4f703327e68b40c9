/**
 * A daemon for the benchmarks, in its own process:
 * `daemon-process.ts <db> <fetchers-dir> <socket> [<tls-cert> <tls-key> <tls-ca>]` (with the three files, it also
 * listens for TLS on 127.0.0.1, on a free port). Prints JSON lines on stdout: `{"event":"ready","maxRssMb",
 * "tlsPort"}` once listening, then `{"event":"completed","ingestMs","maxRssMb","lines"}` after each fetcher run
 * is complete, and `{"event":"rss","rssMb","connections"}` on each SIGUSR2 (after a garbage collection when
 * run with `--expose-gc`). SIGTERM stops it.
 */
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { SupervisorStorage, startSupervisor } from "../src/index.js";

const [db, fetchersDir, socket, certFile, keyFile, caFile] = process.argv.slice(2) as [
  string,
  string,
  string,
  string?,
  string?,
  string?,
];
const maxRssMb = () => process.resourceUsage().maxRSS / 1024;
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

const tls =
  certFile && keyFile && caFile ? { host: "127.0.0.1", port: 0, certFile, keyFile, caFile } : undefined;
// 512 connections of each kind are opened back to back: room for both while the first ones close
const sup = await startSupervisor({
  db,
  fetchersDir,
  socket,
  maxConnections: 4_096,
  ...(tls ? { tls } : {}),
});
let firstIngest: number | undefined;
sup.on("run", (e) => {
  if (e.change === "added") firstIngest = performance.now();
  if (e.change === "completed" && firstIngest !== undefined) {
    stats?.start(); // from here on the daemon serves workers
    say({
      event: "completed",
      ingestMs: performance.now() - firstIngest,
      maxRssMb: maxRssMb(),
      lines: sup.stats().linesIngested,
    });
  }
});
process.on("SIGUSR2", () => {
  (globalThis as { gc?: () => void }).gc?.();
  say({ event: "rss", rssMb: process.memoryUsage().rss / 2 ** 20, connections: sup.stats().connections });
});
// BENCH_DAEMON_STATS=1: on SIGTERM, where a reply's time goes, on stderr: the WAL syncs' durations, the
// garbage collector's pauses and the event loop's delays from the end of the first ingest (see
// docs/benchmarks/supervisor.md).
const stats = process.env.BENCH_DAEMON_STATS === "1" ? daemonStats() : undefined;
process.once("SIGTERM", () => {
  stats?.print();
  void sup.close();
});

/** Records the figures: `start` starts over, `print` prints them. */
function daemonStats(): { start: () => void; print: () => void } {
  const syncMs: number[] = [];
  const syncWal = SupervisorStorage.prototype.syncWal;
  SupervisorStorage.prototype.syncWal = function (this: SupervisorStorage) {
    const t0 = performance.now();
    return syncWal.call(this).finally(() => syncMs.push(performance.now() - t0));
  };
  const gcMs: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs.push(entry.duration);
  });
  observer.observe({ entryTypes: ["gc"] });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const at = (sorted: number[], q: number) =>
    round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  const round = (ms: number | undefined) => Math.round((ms ?? 0) * 1000) / 1000;
  const start = () => {
    syncMs.length = 0;
    gcMs.length = 0;
    loop.reset();
  };
  const print = () => {
    loop.disable();
    observer.disconnect();
    const syncs = syncMs.sort((a, b) => a - b);
    const gcs = gcMs.sort((a, b) => a - b);
    process.stderr.write(
      `${JSON.stringify({
        event: "daemon-stats",
        syncs: syncs.length,
        syncP50Ms: at(syncs, 0.5),
        syncP99Ms: at(syncs, 0.99),
        syncMaxMs: at(syncs, 1),
        gcs: gcs.length,
        gcTotalMs: round(gcs.reduce((a, b) => a + b, 0)),
        gcP99Ms: at(gcs, 0.99),
        gcMaxMs: at(gcs, 1),
        loopDelayP50Ms: round(loop.percentile(50) / 1e6),
        loopDelayP99Ms: round(loop.percentile(99) / 1e6),
        loopDelayMaxMs: round(loop.max / 1e6),
      })}\n`,
    );
  };
  return { start, print };
}
say({ event: "ready", maxRssMb: maxRssMb(), tlsPort: sup.tlsAddress()?.port ?? null });
