/**
 * Benchmark workers in their own process, as real workers are: `client-process.ts <target-json> <workers>
 * <round-trips>`, where the target is a socket path (a JSON string) or a TLS endpoint. Each worker connects,
 * and once all are connected (the parent says `go` on stdin) loops DONE→JOB (READY first). Prints
 * `{"event":"connected"}`, then one line `{"event":"latencies","ms":[…],"elapsedMs"}` (`elapsedMs`: from `go` to the
 * last reply).
 */
import { SupervisorClient, type TlsEndpoint } from "../src/index.js";
import { timeRoundTrips } from "./round-trips.js";

const [targetJson, workersArg, totalArg] = process.argv.slice(2) as [string, string, string];
const target = JSON.parse(targetJson) as string | TlsEndpoint;
const workers = Number(workersArg);
const perWorker = Math.ceil(Number(totalArg) / workers);
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

const clients = await Promise.all(Array.from({ length: workers }, () => SupervisorClient.connect(target)));
say({ event: "connected" });
await new Promise((resolve) => process.stdin.once("data", resolve));
const start = performance.now();
const latencies = await timeRoundTrips(clients, perWorker);
const elapsedMs = performance.now() - start;
say({ event: "latencies", ms: latencies.map((ms) => Math.round(ms * 1000) / 1000), elapsedMs });
process.stdin.destroy();
