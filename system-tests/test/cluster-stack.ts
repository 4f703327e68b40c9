import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  type RmqStorageClientOptions,
} from "@x/rmq-storage";
import { type RabbitCluster, rabbitmqInstalled, startRabbitCluster } from "@x/test-support/rabbitmq-cluster";
import { uniqueName } from "@x/test-support/unique-name";
import type { WriteCheck, WriteHistory } from "@x/test-support/write-checker";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, onTestFinished } from "vitest";
import { amqpArgs, rotate, type ServeChild, serve } from "./serve-child.js";
import { Writers } from "./writers.js";

/** Connects `n` clients, client `i` to the cluster's nodes starting at node `i` (or to `urls(i)`); closed at the end. */
async function connectClients(
  n: number,
  prefix: string,
  file: string,
  urls: (i: number) => string[],
): Promise<{ clients: RmqStorageClient[]; reads: ProvenanceStorage }> {
  const reads = await openSqliteStorage(file);
  onTestFinished(() => reads.close());
  const clients: RmqStorageClient[] = [];
  for (let i = 0; i < n; i++) {
    const client = await RmqStorageClient.connect({
      url: urls(i),
      storage: reads,
      prefix,
      heartbeatMs: 5_000,
      waitMinMs: 20_000,
      logger: errorsOnly(`client ${i}`),
    });
    onTestFinished(() => client.close());
    clients.push(client);
  }
  await clients[0]?.waitForServer({ timeoutMs: 120_000 });
  return { clients, reads };
}

/** Reads the contents back from the SQLite file, as stored (one record per row), and checks them. */
function checkStorage(history: WriteHistory<bigint>, file: string): WriteCheck {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare("SELECT lower(hex(sha1)) AS id, date FROM content")
      .safeIntegers()
      .all() as Array<{ id: string; date: bigint }>;
    return history.check(rows.map((row) => [row.id, row.date] as const));
  } finally {
    db.close();
  }
}

/**
 * The end of a fault test: stops the servers gracefully, reads the storage back, prints the fault's
 * figures on one line (for the log and docs/reliability.md), and expects nothing lost, duplicated or
 * unexpected among all the items.
 */
export async function verdict(
  fault: string,
  writers: Writers,
  file: string,
  servers: readonly ServeChild[],
  figures: Record<string, number | string>,
): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
  const check = checkStorage(writers.history, file);
  const extra = Object.entries(figures)
    .map(([key, value]) => `${key} ${typeof value === "number" ? Math.round(value) : value}`)
    .join(", ");
  console.log(`[${fault}] items ${check.items}: ${check.summary()}; ${extra}`);
  expect(check.lost).toEqual([]);
  expect(check.duplicated).toEqual([]);
  expect(check.unexpected).toEqual([]);
  expect(check.items).toBe(writers.items);
}

/**
 * A 3-node cluster and a temporary directory for the test file, started before its tests (booting takes
 * 30–60 s on two cores) and removed after them, whatever happens.
 */
export function clusterPerFile(tag: string): { cluster: () => RabbitCluster; dir: () => string } {
  let cluster: RabbitCluster | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    if (!rabbitmqInstalled()) throw new Error("RabbitMQ is not installed: run `pnpm services`");
    dir = mkdtempSync(join(tmpdir(), `x-cluster-${tag}-`));
    cluster = await startRabbitCluster({ tag: `x${tag[0]}` });
  }, 300_000);
  afterAll(async () => {
    await cluster?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the cluster did not start");
    return value;
  };
  return { cluster: () => started(cluster), dir: () => started(dir) };
}

/** The servers and clients of one fault test. */
export interface Stack {
  prefix: string;
  file: string;
  /** Active servers A (ranges 0-7) and B (8-f). */
  active: [ServeChild, ServeChild];
  /** Standbys for 8-f and for 0-7. */
  standbys: [ServeChild, ServeChild];
  clients: RmqStorageClient[];
}

/** What a link fault test changes in {@link startStack}: server A's and client 0's URLs, where server A runs. */
export interface StackLinks {
  /** Server A's broker URLs (fault proxies, or relays into a network namespace). */
  serverA: string[];
  /** Client 0's broker URLs (fault proxies); default: the cluster's, as for the other clients. */
  client0?: string[];
  /** The command server A runs through (`ip netns exec <name>`); default: none. */
  serverAExec?: readonly string[];
}

/**
 * Two active servers (A: ranges 0-7, B: 8-f) and a standby for each (`--standby`), all writing one SQLite
 * file, spread over the nodes (each gets every node, starting with a different one; the active servers
 * start first, so their queues' leaders are on nodes 1 and 2), then 4 clients, also spread. `links`
 * changes server A and client 0 for a link fault.
 */
export async function startStack(
  cluster: RabbitCluster,
  dir: string,
  tag: string,
  links?: StackLinks,
): Promise<Stack> {
  const prefix = uniqueName(tag);
  const file = join(dir, `${tag}.db`);
  const storage = `sqlite:${file}`;
  const urls = (first: number) => amqpArgs(rotate(cluster.urls, first));
  const active: [ServeChild, ServeChild] = [
    await serve(
      "A 0-7",
      storage,
      prefix,
      [...(links ? amqpArgs(links.serverA) : urls(0)), "--ranges", "0-7"],
      links?.serverAExec,
    ),
    await serve("B 8-f", storage, prefix, [...urls(1), "--ranges", "8-f"]),
  ];
  const standbys: [ServeChild, ServeChild] = [
    await serve("A' 8-f", storage, prefix, [...urls(2), "--ranges", "8-f", "--standby", "60"]),
    await serve("B' 0-7", storage, prefix, [...urls(2), "--ranges", "0-7", "--standby", "60"]),
  ];
  const { clients } = await connectClients(4, prefix, file, (i) =>
    i === 0 && links?.client0 ? links.client0 : rotate(cluster.urls, i),
  );
  return { prefix, file, active, standbys, clients };
}

/**
 * Starts the stack's 4 clients writing `items` items (calls of 1 000, two in flight per client), logs their
 * progress, and resolves once `beforeFault` of them are confirmed: the moment to inject the fault.
 */
export async function writeUntil(
  stack: Stack,
  label: string,
  items: number,
  beforeFault: number,
): Promise<Writers> {
  const writers = new Writers(stack.clients, { items, itemsPerCall: 1_000, perClient: 2, tag: stack.prefix });
  writers.progress(label);
  await writers.reach(beforeFault);
  return writers;
}

/** A logger that prints only errors, named, so that a stalled run's log says why calls resolve `false`. */
function errorsOnly(name: string): NonNullable<RmqStorageClientOptions["logger"]> {
  const quiet = () => {};
  return {
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: (first: object | string, msg?: string) =>
      console.log(`[${name}] ${typeof first === "string" ? first : `${msg ?? ""} ${JSON.stringify(first)}`}`),
  };
}
