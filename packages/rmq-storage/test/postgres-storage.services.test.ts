import { XError } from "@x/core";
import { PG_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStorage, RelationType } from "../src/index.js";
import { randomId } from "./fixture.js";
import { expectClosedBehaviour, storageSuite } from "./storage-suite.js";

const schemas: string[] = [];
const schema = () => {
  const name = uniqueName("pg");
  schemas.push(name);
  return name;
};

beforeAll(() => requireService("PostgreSQL", PG_URL), 2_000);
afterAll(async () => {
  const client = new pg.Client(PG_URL);
  await client.connect();
  for (const name of schemas) await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  await client.end();
});

storageSuite("PostgreSQL storage", async () => {
  const storage = await openPostgresStorage(PG_URL, { schema: schema(), poolSize: 4 });
  return {
    storage,
    fresh: () => openPostgresStorage(PG_URL, { schema: schema(), poolSize: 2 }),
    cleanup: () => storage.close(),
  };
});

describe("openPostgresStorage", () => {
  it("creates its schema once even when opened concurrently", async () => {
    const name = schema();
    const all = await Promise.all(
      [1, 2, 3, 4].map(() => openPostgresStorage(PG_URL, { schema: name, poolSize: 1 })),
    );
    const id = randomId();
    expect(await all[0]?.contentAdd(new Map([[id, 5n]]))).toBe(true);
    expect(await all[3]?.contentGet([id])).toEqual(new Map([[id, 5n]]));
    await Promise.all(all.map((s) => s.close()));
  });

  it("stores dates as timestamptz, exactly, in UTC", async () => {
    const name = schema();
    const storage = await openPostgresStorage(PG_URL, { schema: name, poolSize: 1 });
    const id = randomId();
    await storage.contentAdd(new Map([[id, 1_700_000_000_123_457n]]));
    const client = new pg.Client(PG_URL);
    await client.connect();
    const { rows } = await client.query(
      `SELECT to_char(date AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS d FROM ${name}.content WHERE sha1 = decode($1, 'hex')`,
      [id],
    );
    await client.end();
    expect(rows[0].d).toBe("2023-11-14 22:13:20.123457");
    await storage.close();
  });

  it("never deadlocks with concurrent overlapping writers", async () => {
    const name = schema();
    const writers = await Promise.all(
      [1, 2, 3].map(() => openPostgresStorage(PG_URL, { schema: name, poolSize: 3 })),
    );
    const ids = Array.from({ length: 300 }, randomId);
    const revs = Array.from({ length: 20 }, randomId);
    const calls = writers.flatMap((w, i) =>
      Array.from({ length: 4 }, (_, j) => {
        const shuffled = [...ids].sort(() => Math.random() - 0.5);
        return [
          w.contentAdd(new Map(shuffled.map((id) => [id, BigInt(i * 10 + j)]))),
          w.relationAdd(
            RelationType.CNT_EARLY_IN_REV,
            new Map(
              shuffled
                .slice(0, 100)
                .map((id) => [id, revs.map((dst) => ({ dst, path: Buffer.from(dst.slice(0, 4)) }))]),
            ),
          ),
        ];
      }).flat(),
    );
    expect(await Promise.all(calls)).toEqual(calls.map(() => true));
    expect((await writers[0]?.contentGet(ids))?.get(ids[0] as string)).toBe(0n);
    await Promise.all(writers.map((w) => w.close()));
  });

  it("rejects bad options and an unreachable server", async () => {
    for (const [options, name] of [
      [{ schema: "Bad-Name" }, "schema"],
      [{ poolSize: 0 }, "poolSize"],
    ] as const) {
      const error = await openPostgresStorage(PG_URL, options).catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION")).toBe(true);
      expect((error as Error).message).toContain(name);
    }
    const error = await openPostgresStorage("postgres://postgres@127.0.0.1:1/postgres", {
      connectTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_BACKEND")).toBe(true);
    expect((error as Error).cause).toBeDefined();
  });

  it("takes the schema from the option or the URL's ?schema=, equivalently; both must agree", async () => {
    const name = schema();
    const id = randomId();
    const byUrl = await openPostgresStorage(`${PG_URL}?schema=${name}`, { poolSize: 1 });
    expect(await byUrl.contentAdd(new Map([[id, 7n]]))).toBe(true);
    const byOption = await openPostgresStorage(PG_URL, { schema: name, poolSize: 1 });
    const byBoth = await openPostgresStorage(`${PG_URL}?schema=${name}`, { schema: name, poolSize: 1 });
    expect(await byOption.contentGet([id])).toEqual(new Map([[id, 7n]]));
    expect(await byBoth.contentGet([id])).toEqual(new Map([[id, 7n]]));
    await Promise.all([byUrl.close(), byOption.close(), byBoth.close()]);
    for (const [url, options] of [
      [`${PG_URL}?schema=${name}`, { schema: `${name}_other` }],
      [`${PG_URL}?schema=Bad-Name`, {}],
    ] as const) {
      const error = await openPostgresStorage(url, options).catch((e: unknown) => e);
      expect(XError.is(error, "ERR_X_RMQ_STORAGE_INVALID_OPTION"), String(error)).toBe(true);
      expect((error as Error).message).toContain("schema");
    }
  });

  it("drop() removes its tables, functions and schema, then closes", async () => {
    const name = schema();
    const storage = await openPostgresStorage(PG_URL, { schema: name, poolSize: 2 });
    expect(await storage.contentAdd(new Map([[randomId(), 1n]]))).toBe(true);
    await storage.drop();
    expect(await namespaceObjects(name)).toEqual({ schema: 0, objects: 0 });
    const error = await storage.contentGet([randomId()]).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
    expect(XError.is(await storage.drop().catch((e: unknown) => e), "ERR_X_RMQ_STORAGE_CLOSED")).toBe(true);
  });

  it("drop() leaves a schema that holds something it did not create, and that thing", async () => {
    const name = schema();
    const storage = await openPostgresStorage(`${PG_URL}?schema=${name}`, { poolSize: 1 });
    const client = new pg.Client(PG_URL);
    await client.connect();
    await client.query(`CREATE TABLE ${name}.mine (x int)`);
    await client.end();
    await storage.drop();
    expect(await namespaceObjects(name)).toEqual({ schema: 1, objects: 1 });
  });

  it("closes idempotently and rejects every call afterwards", async () => {
    await expectClosedBehaviour(await openPostgresStorage(PG_URL, { schema: schema(), poolSize: 1 }));
  });
});

/** Whether a schema exists, and how many tables, indexes, sequences and functions it holds. */
async function namespaceObjects(name: string): Promise<{ schema: number; objects: number }> {
  const client = new pg.Client(PG_URL);
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = $1)::int AS schema,
        ((SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1)
        + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1))::int AS objects`,
      [name],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}
