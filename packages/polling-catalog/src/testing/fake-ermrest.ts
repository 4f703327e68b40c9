import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type InspectOptions, inspect } from "node:util";
import { sleep } from "@x/core";
import { MAX_DURATION_MS, parseOptions, v } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "../errors.js";
import { type FakeNoticeSource, registerFakeServer } from "../fake-notices.js";
import { inspectAs } from "../redact.js";
import { columnTypes } from "./column-types.js";
import { ConnectionPool } from "./connection-pool.js";
import { FakeCatalog, type FakeReply } from "./fake-catalog.js";
import type { Row } from "./fake-table.js";
import { NoticePublisher } from "./notice-publisher.js";
import { TableCommits } from "./table-commits.js";

/** A column type of the fake: governs filter parsing and `@sort` order only. */
export type FakeColumnType = (typeof columnTypes)[number];

/** One table of {@link FakeErmrestOptions.tables}. */
export interface FakeTableOptions {
  /** The key columns, e.g. `["id"]` or `["RID"]`. At least one. Required. */
  key: string[];
  /** Initial rows, in row order. Default none. They may bring their own `RID`. */
  rows?: Row[];
  /** Columns to declare up front (for tables that start empty). Default none. */
  columns?: string[];
  /** Column types; a column without an entry is `"text"`. Default none. */
  types?: Record<string, FakeColumnType>;
}

/** Options of {@link startFakeErmrest}. */
export interface FakeErmrestOptions {
  /** The tables, named `"schema:table"`. Required. */
  tables: Record<string, FakeTableOptions>;
  /** Publish `change` notices on this broker, e.g. `amqp://guest:guest@127.0.0.1:5672`. Default: no notices. */
  amqpUrl?: string;
  /** The fanout exchange for notices. Default `"ermrest_changes"`. */
  noticeExchange?: string;
  /** The TCP port on 127.0.0.1. Default 0: any free port. */
  port?: number;
  /**
   * How long each write (PUT, POST, DELETE) holds its table's transaction open, in milliseconds: each write
   * draws a time from half to 1.5 times this. Two writes to the same table whose transactions overlap conflict
   * as on ERMrest: the first to commit wins, the other is answered `503` `Transaction aborted.` with nothing
   * changed. Reads never wait and never conflict. `0` applies every write at once, so writes never conflict.
   * At most 2 writes hold a transaction at once; the others wait for one to end first, as for a server's
   * database connections. Finite, ≥ 0. Default `20`, calibrated on a real ERMrest (see the README).
   */
  writeDurationMs?: number;
  /**
   * The share of writes (PUT, POST, DELETE) answered `503` with the text `Transaction aborted.` and nothing
   * changed (no version bump, no notice), besides the conflicts of `writeDurationMs`, whatever the
   * concurrency. A number from 0 to 1. Default 0.
   */
  transactionAbortRate?: number;
}

/** Options of {@link FakeErmrest.failNext}. */
export interface FailNextOptions {
  /** The status to answer with. Default 503. */
  status?: number;
  /** Apply a write (version, notice) before answering with the error: the lost-response hazard. Default `false`. */
  afterCommit?: boolean;
}

/** One request the fake answered, for assertions and counting. */
export interface FakeRequestRecord {
  method: string;
  /** The raw path and query, as received. */
  url: string;
  status: number;
  /** How many rows a GET answered 200 with a JSON array returned (what the client read); absent otherwise. */
  rows?: number;
  /** Request headers, lower-cased names. */
  headers: Record<string, string>;
}

/** A running fake ERMrest; see {@link startFakeErmrest}. */
export interface FakeErmrest extends AsyncDisposable {
  /** `"127.0.0.1:<port>"`: use as `server` with `scheme: "http"`. */
  readonly server: string;
  /** Always `"1"`. */
  readonly catalogId: string;
  /** The catalog base URL, `http://127.0.0.1:<port>/ermrest/catalog/1`. */
  readonly url: string;
  /** The catalog version: 1 at start, one more per successful write. */
  readonly version: number;
  /** Every request answered so far, in order. */
  readonly requests: readonly FakeRequestRecord[];
  /** Deep copies of a table's rows (`"schema:table"`) in row order, every column present. Throws for an unknown table. */
  rows(table: string): Row[];
  /**
   * Answers the next `count` requests with `options.status` (default 503) and a text body; with
   * `afterCommit`, a write is applied first.
   */
  failNext(count: number, options?: FailNextOptions): void;
  /**
   * The share of writes answered `503 Transaction aborted.` with nothing changed; see
   * {@link FakeErmrestOptions.transactionAbortRate}. Settable at any time (0 to 1).
   */
  transactionAbortRate: number;
  /** See {@link FakeErmrestOptions.writeDurationMs}. Settable at any time (finite, ≥ 0). */
  writeDurationMs: number;
  /**
   * Restarts the server as a deploy would: closes every connection (HTTP and AMQP), refuses connections for
   * `downMs` milliseconds, then listens again on the same port with the same data. Resolves once it is back.
   */
  restart(downMs: number): Promise<void>;
  /** Stops the server (idle keep-alive connections included) and the AMQP connection. Idempotent. */
  close(): Promise<void>;
  /**
   * What `JSON.stringify` and `util.inspect` show: the URL, the version, how many requests were answered and
   * the write settings. Not the requests, whose headers hold the clients' cookies and tokens, nor the broker
   * URL.
   */
  toJSON(): FakeErmrestDescription;
}

/** What {@link FakeErmrest.toJSON} shows. */
export interface FakeErmrestDescription {
  /** The catalog base URL. */
  url: string;
  /** The catalog version. */
  version: number;
  /** How many requests were answered. */
  requests: number;
  /** See {@link FakeErmrestOptions.writeDurationMs}. */
  writeDurationMs: number;
  /** See {@link FakeErmrestOptions.transactionAbortRate}. */
  transactionAbortRate: number;
}

const tableSchema = v
  .object({
    key: v
      .array(v.string().min(1), { error: "an array of column names" })
      .min(1, { error: "at least one key column" }),
    rows: v.array(v.record(v.string(), v.unknown()), { error: "an array of row objects" }).default([]),
    columns: v.array(v.string().min(1), { error: "an array of column names" }).default([]),
    types: v
      .record(v.string(), v.enum(columnTypes, { error: `one of ${columnTypes.join(", ")}` }))
      .default({}),
  })
  .strict();

const durationError = `a number of milliseconds from 0 to ${MAX_DURATION_MS}`;
const fakeOptionsSchema = v
  .object({
    tables: v.record(v.string().regex(/^[^:]+:.+$/, { error: 'a "schema:table" name' }), tableSchema, {
      error: 'an object of "schema:table" → table options',
    }),
    amqpUrl: v.string({ error: "an amqp:// URL" }).min(1).optional(),
    noticeExchange: v.string({ error: "a non-empty exchange name" }).min(1).default("ermrest_changes"),
    port: v.number({ error: "a TCP port" }).int().min(0).max(65_535).default(0),
    writeDurationMs: v
      .number({ error: durationError })
      .min(0, { error: durationError })
      .max(MAX_DURATION_MS, { error: durationError })
      .default(20),
    transactionAbortRate: v.number({ error: "a share from 0 to 1" }).min(0).max(1).default(0),
  })
  .strict();

const maxBodyBytes = 64 * 1024 * 1024;
/**
 * How many write transactions the fake runs at once, as a server's pool of database connections does; further
 * writes wait for a connection before their transaction begins (reads never wait). Calibrated on a real ERMrest
 * with `writeDurationMs` 20: the README's batch loop (20 agents, 1 000 rows, unpaced) then sees 47–48 % of its
 * claims rolled back in 8.5–9.4 s, where ERMrest showed 41–48 % in 7.9–8.7 s; without the pool the fake rolled
 * back 56–63 %.
 */
const writePoolSize = 2;

/**
 * Starts an in-process fake ERMrest serving catalog `"1"` on 127.0.0.1, faithful to the protocol rules of
 * ERMrest that agents depend on: catalog-wide versions and ETags, 304/412 preconditions, entity GET/POST/PUT/
 * DELETE and attributegroup PUT with filters, `@sort` and `limit`, `text/plain` errors, and `change` notices on
 * a fanout exchange when `amqpUrl` is given.
 *
 * @example
 * ```ts
 * await using fake = await startFakeErmrest({ tables: { "S:Job": { key: ["id"], rows: [{ id: 1, state: "new" }] } } });
 * const catalog = new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
 * ```
 * @throws a {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_INVALID_OPTION` on bad options or initial
 *   rows; the broker's error when `amqpUrl` is given and unreachable
 */
export async function startFakeErmrest(options: FakeErmrestOptions): Promise<FakeErmrest> {
  const parsed = parseOptions(fakeOptionsSchema, options, ErrorCode.INVALID_OPTION, PollingCatalogError);
  let catalog: FakeCatalog;
  try {
    catalog = new FakeCatalog(parsed.tables);
  } catch (cause) {
    throw new PollingCatalogError(ErrorCode.INVALID_OPTION, `invalid option ${(cause as Error).message}`, {
      cause,
    });
  }
  const publisher = parsed.amqpUrl
    ? await NoticePublisher.open(parsed.amqpUrl, parsed.noticeExchange)
    : undefined;
  const fake = new RunningFake(catalog, publisher);
  fake.transactionAbortRate = parsed.transactionAbortRate;
  fake.writeDurationMs = parsed.writeDurationMs;
  try {
    await fake.listen(parsed.port);
  } catch (error) {
    await fake.close();
    throw error;
  }
  fake.announce({ amqpUrl: parsed.amqpUrl, noticeExchange: parsed.noticeExchange });
  return fake;
}

class RunningFake implements FakeErmrest {
  readonly catalogId = "1";
  readonly requests: FakeRequestRecord[] = [];
  readonly #catalog: FakeCatalog;
  readonly #publisher: NoticePublisher | undefined;
  readonly #server: Server;
  #address = "127.0.0.1:0";
  #faults = { left: 0, status: 503, afterCommit: false };
  #abortRate = 0;
  #writeDurationMs = 0;
  readonly #commits = new TableCommits();
  readonly #connections = new ConnectionPool(writePoolSize);
  #closing: Promise<void> | undefined;
  #restarting: Promise<void> | undefined;
  #unregister: (() => void) | undefined;

  constructor(catalog: FakeCatalog, publisher: NoticePublisher | undefined) {
    this.#catalog = catalog;
    this.#publisher = publisher;
    this.#server = createServer((request, response) => {
      this.#serve(request, response).catch((error: unknown) => {
        if (!response.headersSent)
          send(response, textReply(500, `Internal error of the fake: ${String(error)}`));
        else response.destroy();
      });
    });
  }

  get server(): string {
    return this.#address;
  }

  get url(): string {
    return `http://${this.#address}/ermrest/catalog/${this.catalogId}`;
  }

  get version(): number {
    return this.#catalog.version;
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, "127.0.0.1", () => {
        this.#server.off("error", reject);
        this.#address = `127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
        resolve();
      });
    });
  }

  rows(table: string): Row[] {
    return this.#catalog.rows(table);
  }

  toJSON(): FakeErmrestDescription {
    return {
      url: this.url,
      version: this.version,
      requests: this.requests.length,
      writeDurationMs: this.#writeDurationMs,
      transactionAbortRate: this.#abortRate,
    };
  }

  [inspect.custom](depth: number, options: InspectOptions, nested: typeof inspect): string {
    return inspectAs("FakeErmrest", this.toJSON(), depth, options, nested);
  }

  get transactionAbortRate(): number {
    return this.#abortRate;
  }

  set transactionAbortRate(rate: number) {
    if (typeof rate !== "number" || !(rate >= 0 && rate <= 1))
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option transactionAbortRate: ${String(rate)} (expected a share from 0 to 1)`,
      );
    this.#abortRate = rate;
  }

  get writeDurationMs(): number {
    return this.#writeDurationMs;
  }

  set writeDurationMs(durationMs: number) {
    if (typeof durationMs !== "number" || !(durationMs >= 0 && durationMs <= MAX_DURATION_MS))
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option writeDurationMs: ${String(durationMs)} (expected ${durationError})`,
      );
    this.#writeDurationMs = durationMs;
  }

  restart(downMs: number): Promise<void> {
    if (typeof downMs !== "number" || !(downMs >= 0 && downMs <= MAX_DURATION_MS))
      return Promise.reject(
        new PollingCatalogError(
          ErrorCode.INVALID_OPTION,
          `invalid option downMs: ${String(downMs)} (expected ${durationError})`,
        ),
      );
    if (this.#closing) return Promise.resolve();
    this.#restarting ??= (async () => {
      try {
        const port = Number(this.#address.slice(this.#address.lastIndexOf(":") + 1));
        await this.#stopListening();
        await this.#publisher?.disconnect();
        await sleep(downMs);
        if (!this.#closing) await this.listen(port);
      } finally {
        this.#restarting = undefined;
      }
    })();
    return this.#restarting;
  }

  failNext(count: number, options: FailNextOptions = {}): void {
    if (!Number.isInteger(count) || count < 0)
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option count: ${count} (expected an integer ≥ 0)`,
      );
    const { status = 503, afterCommit = false } = options;
    if (!Number.isInteger(status) || status < 100 || status > 599)
      throw new PollingCatalogError(
        ErrorCode.INVALID_OPTION,
        `invalid option status: ${status} (expected an HTTP status)`,
      );
    this.#faults = { left: count, status, afterCommit };
  }

  /**
   * Tells the catalogs of this process created for this fake without `amqpServer` where its notices go, so
   * that they bind there, or nowhere, rather than at a broker on 127.0.0.1; until `close()`.
   */
  announce(source: FakeNoticeSource): void {
    this.#unregister = registerFakeServer(this.#address, source);
  }

  close(): Promise<void> {
    this.#unregister?.();
    this.#closing ??= (async () => {
      await Promise.all([this.#stopListening(), this.#publisher?.close()]);
    })();
    return this.#closing;
  }

  /** Closes the listening socket and every connection; resolves at once when not listening. */
  #stopListening(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    return closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const fault = this.#takeFault();
    const method = request.method ?? "GET";
    const url = request.url ?? "/";
    const table = this.#catalog.writeTable({ method, url });
    let reply: FakeReply;
    if (body === undefined) reply = textReply(413, "Request body too large.");
    else if (fault && !fault.afterCommit) reply = textReply(fault.status, injected(fault.status));
    else if (isWrite(method) && Math.random() < this.#abortRate) reply = transactionAborted();
    else {
      const writeMs = table !== undefined ? this.#writeDurationMs * (0.5 + Math.random()) : 0;
      // A write holds one of the server's database connections for its whole transaction.
      const release = writeMs > 0 ? await this.#connections.acquire() : undefined;
      const transaction = table === undefined ? 0 : this.#commits.begin(table);
      if (writeMs > 0) {
        await sleep(writeMs);
        // The server went down meanwhile (restart, close): the transaction dies with its connection.
        if (request.socket.destroyed) {
          release?.();
          return;
        }
      }
      const conflicted = table !== undefined && this.#commits.conflicts(table, transaction);
      if (conflicted) reply = transactionAborted();
      else {
        reply = this.#catalog.handle({ method, url, headers: request.headers, body });
        if (reply.wrote && table !== undefined) this.#commits.commit(table);
      }
      // Committed or rolled back, the connection goes back to the pool.
      release?.();
      if (!conflicted) {
        if (reply.wrote) await this.#publisher?.publish();
        if (fault) reply = textReply(fault.status, injected(fault.status));
      }
    }
    this.requests.push({
      method,
      url,
      status: reply.status,
      ...(method === "GET" && reply.status === 200 && reply.body.startsWith("[")
        ? { rows: (JSON.parse(reply.body) as unknown[]).length }
        : {}),
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(", ") : (value ?? ""),
        ]),
      ),
    });
    send(response, reply);
  }

  #takeFault(): { status: number; afterCommit: boolean } | undefined {
    if (this.#faults.left === 0) return undefined;
    this.#faults.left--;
    return { status: this.#faults.status, afterCommit: this.#faults.afterCommit };
  }
}

function isWrite(method: string | undefined): boolean {
  return method === "PUT" || method === "POST" || method === "DELETE";
}

/** ERMrest's answer to a serialization failure: the request was rolled back. */
function transactionAborted(): FakeReply {
  return textReply(503, "Transaction aborted.");
}

function injected(status: number): string {
  return `Injected failure: HTTP ${status}.`;
}

function textReply(status: number, message: string): FakeReply {
  return {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
    body: `${message}\n`,
    wrote: false,
  };
}

function send(response: ServerResponse, reply: FakeReply): void {
  const noBody = reply.status === 204 || reply.status === 304;
  response.writeHead(reply.status, reply.headers);
  response.end(noBody ? undefined : reply.body);
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
