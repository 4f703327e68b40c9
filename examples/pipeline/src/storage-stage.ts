import { createHash } from "node:crypto";
import type { Logger } from "@x/core";
import {
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  RmqStorageServer,
  type Sha1,
  type Timestamp,
} from "@x/rmq-storage";
import type { EnrichedResult, ResultSink } from "./results-stage.js";

/** What the storage stage did. */
export interface StorageReport {
  /** Distinct results written (each job once, corrections merge into the same row). */
  written: number;
  /** `contentAdd` calls, and how many of them resolved `false` even after retries. */
  calls: number;
  failedCalls: number;
  /** Batches the server committed to SQLite. */
  serverBatches: number;
  /** Results found in the SQLite store afterwards, read through the client (reads go to the store directly). */
  readBack: number;
}

const BATCH = 250;
const ATTEMPTS = 3;

const sha1 = (text: string): Sha1 => createHash("sha1").update(text).digest("hex");
const micros = (date: Date): Timestamp => BigInt(date.getTime()) * 1000n;

/**
 * Writes every result through @x/rmq-storage: the client splits each `contentAdd` by id range and publishes
 * it to RabbitMQ; the server (in this process, on its own connection) merges and commits each batch to a
 * SQLite file and acknowledges only after the commit. The id is the SHA-1 of the attr path, the date the
 * result's event time; a correction sends the same id again, which the storage merges (earliest date wins).
 */
export class StorageStage implements ResultSink {
  readonly #client: RmqStorageClient;
  readonly #server: RmqStorageServer;
  readonly #local: ProvenanceStorage;
  #buffer = new Map<Sha1, Timestamp>();
  #pending = new Set<Promise<void>>();
  #ids = new Set<Sha1>();
  #report: StorageReport = { written: 0, calls: 0, failedCalls: 0, serverBatches: 0, readBack: 0 };
  #closed: Promise<void> | undefined;

  private constructor(client: RmqStorageClient, server: RmqStorageServer, local: ProvenanceStorage) {
    this.#client = client;
    this.#server = server;
    this.#local = local;
    server.on("batch", () => {
      this.#report.serverBatches++;
    });
  }

  /** Starts the server and connects the client; both use `prefix` so the run has its own queues. */
  static async start(options: {
    url: string;
    dbFile: string;
    prefix: string;
    logger: Logger;
  }): Promise<StorageStage> {
    const { url, dbFile, prefix, logger } = options;
    const broker = { url, prefix, logger, connectTimeoutMs: 5_000 };
    const local = await openSqliteStorage(dbFile, { logger });
    let server: RmqStorageServer | undefined;
    try {
      server = await RmqStorageServer.start({
        ...broker,
        storage: () => openSqliteStorage(dbFile, { logger }),
      });
      const client = await RmqStorageClient.connect({ ...broker, storage: local, waitMinMs: 30_000 });
      return new StorageStage(client, server, local);
    } catch (error) {
      await server?.stop();
      await local.close();
      throw error;
    }
  }

  add(result: EnrichedResult): void {
    const id = sha1(result.job.attrPath);
    this.#ids.add(id);
    this.#buffer.set(id, micros(result.eventTime));
    if (this.#buffer.size >= BATCH) this.#flush();
  }

  #flush(): void {
    if (this.#buffer.size === 0) return;
    const batch = this.#buffer;
    this.#buffer = new Map();
    const write = (async () => {
      this.#report.calls++;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        if (await this.#client.contentAdd(batch)) return;
      }
      this.#report.failedCalls++;
    })();
    this.#pending.add(write);
    const settled = () => this.#pending.delete(write);
    write.then(settled, settled); // a rejection (bad input, closed) surfaces in finish()
  }

  /** Writes what is buffered, waits for every call, and reads the results back from the store. */
  async finish(): Promise<StorageReport> {
    this.#flush();
    await Promise.all(this.#pending);
    this.#report.written = this.#ids.size;
    this.#report.readBack = (await this.#client.contentGet(this.#ids)).size;
    return { ...this.#report };
  }

  /** Closes the client, stops the server (it closes its store) and closes the read store. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#client.close();
      await this.#server.stop();
      await this.#local.close();
    })();
    return this.#closed;
  }
}
