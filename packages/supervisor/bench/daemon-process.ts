/**
 * A daemon for the benchmarks, in its own process: `daemon-process.ts <db> <fetchers-dir> <socket>`.
 * Prints JSON lines on stdout: `{"event":"ready","maxRssMb"}` once listening, then
 * `{"event":"completed","ingestMs","maxRssMb","lines"}` after each fetcher run is complete. SIGTERM stops it.
 */
import { startSupervisor } from "../src/index.js";

const [db, fetchersDir, socket] = process.argv.slice(2) as [string, string, string];
const maxRssMb = () => process.resourceUsage().maxRSS / 1024;
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

const sup = await startSupervisor({ db, fetchersDir, socket });
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
process.once("SIGTERM", () => void sup.close());
say({ event: "ready", maxRssMb: maxRssMb() });
