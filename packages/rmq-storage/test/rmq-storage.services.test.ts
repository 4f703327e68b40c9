import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AMQP_URL, PG_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import {
  openPostgresStorage,
  openSqliteStorage,
  type ProvenanceStorage,
  RmqStorageClient,
  RmqStorageServer,
} from "../src/index.js";
import { deleteTopology } from "./broker.js";
import { storageSuite } from "./storage-suite.js";

const dir = mkdtempSync(join(tmpdir(), "rmq-storage-suite-"));
const prefixes: string[] = [];
const schemas: string[] = [];
let n = 0;

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  await requireService("PostgreSQL", PG_URL);
}, 2_000);
afterAll(async () => {
  for (const prefix of prefixes) await deleteTopology(prefix);
  const client = new pg.Client(PG_URL);
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
  rmSync(dir, { recursive: true, force: true });
});

/** A server and a client on a fresh topology, both on the storage `open` opens. */
async function stack(open: () => Promise<ProvenanceStorage>) {
  const prefix = `${uniqueName("suite")}.`;
  prefixes.push(prefix);
  const server = await RmqStorageServer.start({ url: AMQP_URL, storage: open, prefix });
  const local = await open();
  const client = await RmqStorageClient.connect({ url: AMQP_URL, storage: local, prefix, waitMinMs: 20_000 });
  return {
    client,
    close: async () => {
      await client.close();
      await local.close();
      await server.stop();
    },
  };
}

/** The client, with `close` replaced by one that also stops what stands behind it. */
function closingWith(client: RmqStorageClient, close: () => Promise<void>): ProvenanceStorage {
  return new Proxy(client, {
    get: (target, key) => {
      if (key === "close") return close;
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

storageSuite("through RabbitMQ into SQLite", async () => {
  const file = join(dir, `db-${n++}.sqlite`);
  const main = await stack(() => openSqliteStorage(file));
  const others: Array<() => Promise<void>> = [];
  return {
    storage: main.client,
    fresh: async () => {
      const other = join(dir, `db-${n++}.sqlite`);
      const s = await stack(() => openSqliteStorage(other));
      others.push(s.close);
      return closingWith(s.client, s.close);
    },
    cleanup: async () => {
      await main.close();
      for (const close of others) await close();
    },
  };
});

storageSuite("through RabbitMQ into PostgreSQL", async () => {
  const schema = uniqueName("rmqpg");
  schemas.push(schema);
  const main = await stack(() => openPostgresStorage(PG_URL, { schema, poolSize: 4 }));
  return {
    storage: main.client,
    fresh: async () => {
      const other = uniqueName("rmqpg");
      schemas.push(other);
      const s = await stack(() => openPostgresStorage(PG_URL, { schema: other, poolSize: 4 }));
      return closingWith(s.client, s.close);
    },
    cleanup: () => main.close(),
  };
});
