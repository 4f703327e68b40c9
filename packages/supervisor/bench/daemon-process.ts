/**
 * A daemon for the benchmarks, in its own process:
 * `daemon-process.ts <db> <fetchers-dir> <socket> [<tls-cert> <tls-key> <tls-ca>]` (with the three files, it also
 * listens for TLS on 127.0.0.1, on a free port). Prints JSON lines on stdout: `{"event":"ready","maxRssMb",
 * "tlsPort"}` once listening, then `{"event":"completed","ingestMs","maxRssMb","lines"}` after each fetcher run
 * is complete, and `{"event":"rss","rssMb","connections"}` on each SIGUSR2 (after a garbage collection when
 * run with `--expose-gc`). SIGTERM stops it.
 */
import { startSupervisor } from "../src/index.js";

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
process.once("SIGTERM", () => void sup.close());
say({ event: "ready", maxRssMb: maxRssMb(), tlsPort: sup.tlsAddress()?.port ?? null });
