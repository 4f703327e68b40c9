/**
 * The client side of the single-call RSS figure, in a process of its own running the built package (no
 * TypeScript loader), as an application would:
 * `node bench/one-call-client.mjs <amqp-url> <prefix> <sqlite-file> <items> [<items-per-message>]`.
 * Prints one JSON line: the RSS before the data exists, after the caller built its Map, and the peak during the call,
 * and where the memory was before the call and at the peak: the live JavaScript heap (`heapUsedMB`), the
 * `Buffer`s and other memory outside it (`externalMB`), and the young generation's resident pages
 * (`youngResidentMB`, which a scavenge that copies the caller's young objects doubles).
 */
import { randomBytes } from "node:crypto";
import { getHeapSpaceStatistics } from "node:v8";
import { openSqliteStorage, RmqStorageClient } from "@x/rmq-storage";

const [url, prefix, file, count, perMessage] = process.argv.slice(2);
const items = Number(count);
const mb = (bytes) => Math.round(bytes / 1024 / 1024);
const empty = process.memoryUsage.rss();

const local = await openSqliteStorage(file);
const client = await RmqStorageClient.connect({
  url,
  storage: local,
  prefix,
  ...(perMessage ? { itemsPerMessage: Number(perMessage) } : {}),
});
/** The caller's data: `items` random ids with distinct dates. */
function randomCall() {
  const call = new Map();
  const bytes = randomBytes(20 * items);
  for (let i = 0; i < items; i++)
    call.set(bytes.toString("hex", i * 20, i * 20 + 20), 1_500_000_000_000_000n + BigInt(i));
  return call;
}
/** Where the process's memory is now, in MB. */
function breakdown() {
  const { heapUsed, external } = process.memoryUsage();
  const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
  return {
    heapUsedMB: mb(heapUsed),
    externalMB: mb(external),
    youngResidentMB: mb(young?.physical_space_size ?? 0),
  };
}
const call = randomCall();
const before = process.memoryUsage.rss();
const beforeCall = breakdown();
let peak = before;
let atPeak = beforeCall;
const sample = () => {
  const rss = process.memoryUsage.rss();
  if (rss > peak) {
    peak = rss;
    atPeak = breakdown();
  }
};
const timer = setInterval(sample, 50);
const started = performance.now();
const ok = await client.contentAdd(call);
const seconds = (performance.now() - started) / 1_000;
clearInterval(timer);
sample();
await client.close();
await local.close();
process.stdout.write(
  `${JSON.stringify({ ok, seconds, emptyRssMB: mb(empty), beforeCallRssMB: mb(before), peakRssMB: mb(peak), beforeCall, atPeak })}\n`,
);
