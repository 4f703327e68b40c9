import { appendFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate } from "node:timers/promises";
import { type JobSpec, jobLine } from "./plan.js";

/** What the fetcher wrote. */
export interface FetcherRun {
  /** The complete file, `<stem>.<run>.txt`. */
  file: string;
  /** The run number: the unix time at which the fetcher started. */
  runStarted: number;
  lines: number;
}

/**
 * Writes the jobs the way a production fetcher does: appends to `demo.<unixtime>.txt.part` in a few chunks
 * (the supervisor follows the growing file), then renames it to `.txt`, which completes the run.
 */
export async function writeFetcherFile(
  dir: string,
  jobs: readonly JobSpec[],
  chunks = 4,
): Promise<FetcherRun> {
  const runStarted = Math.floor(Date.now() / 1000);
  const part = join(dir, `demo.${runStarted}.txt.part`);
  const file = join(dir, `demo.${runStarted}.txt`);
  const size = Math.ceil(jobs.length / chunks);
  for (let start = 0; start < jobs.length; start += size) {
    const text = jobs
      .slice(start, start + size)
      .map((job) => `${jobLine(job)}\n`)
      .join("");
    await appendFile(part, text);
    await setImmediate();
  }
  await rename(part, file);
  return { file, runStarted, lines: jobs.length };
}
