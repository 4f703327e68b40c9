import { describe, expectTypeOf, it } from "vitest";
import type { Row } from "./index.js";
import {
  type FailNextOptions,
  type FakeColumnType,
  type FakeErmrest,
  type FakeErmrestOptions,
  type FakeRequestRecord,
  type FakeTableOptions,
  startFakeErmrest,
} from "./testing/index.js";

declare const fake: FakeErmrest;

describe("startFakeErmrest() options", () => {
  it("needs tables; the rest is optional", () => {
    expectTypeOf<keyof FakeErmrestOptions>().toEqualTypeOf<
      "tables" | "amqpUrl" | "noticeExchange" | "port" | "writeDurationMs" | "transactionAbortRate"
    >();
    expectTypeOf<FakeErmrestOptions["tables"]>().toEqualTypeOf<Record<string, FakeTableOptions>>();
    expectTypeOf(startFakeErmrest).toBeCallableWith({ tables: { "S:Job": { key: ["id"] } } });
    expectTypeOf(startFakeErmrest({ tables: {} })).toEqualTypeOf<Promise<FakeErmrest>>();
    // @ts-expect-error: tables are required
    startFakeErmrest({});
    // @ts-expect-error: a table needs its key
    startFakeErmrest({ tables: { "S:Job": { rows: [] } } });
  });

  it("types the tables' column types", () => {
    expectTypeOf<FakeTableOptions>().toEqualTypeOf<{
      key: string[];
      rows?: Row[];
      columns?: string[];
      types?: Record<string, FakeColumnType>;
    }>();
    expectTypeOf<FakeColumnType>().toEqualTypeOf<
      "text" | "int4" | "int8" | "float8" | "boolean" | "timestamptz" | "jsonb"
    >();
    // @ts-expect-error: not a column type of the fake
    startFakeErmrest({ tables: { "S:Job": { key: ["id"], types: { id: "serial4" } } } });
  });
});

describe("FakeErmrest", () => {
  it("exposes its address, version and requests read-only", () => {
    expectTypeOf(fake.server).toEqualTypeOf<string>();
    expectTypeOf(fake.catalogId).toEqualTypeOf<string>();
    expectTypeOf(fake.version).toEqualTypeOf<number>();
    expectTypeOf(fake.requests).toEqualTypeOf<readonly FakeRequestRecord[]>();
    expectTypeOf<FakeRequestRecord>().toEqualTypeOf<{
      method: string;
      url: string;
      status: number;
      rows?: number;
      headers: Record<string, string>;
    }>();
    // @ts-expect-error: readonly
    fake.version = 2;
  });

  it("reads rows, injects failures and closes", () => {
    expectTypeOf(fake.rows("S:Job")).toEqualTypeOf<Row[]>();
    expectTypeOf(fake.failNext).parameters.toEqualTypeOf<[count: number, options?: FailNextOptions]>();
    expectTypeOf<FailNextOptions>().toEqualTypeOf<{ status?: number; afterCommit?: boolean }>();
    expectTypeOf(fake.restart).parameters.toEqualTypeOf<[downMs: number]>();
    expectTypeOf(fake.restart(0)).toEqualTypeOf<Promise<void>>();
    expectTypeOf(fake.transactionAbortRate).toEqualTypeOf<number>();
    expectTypeOf(fake.close()).toEqualTypeOf<Promise<void>>();
    expectTypeOf(fake).toExtend<AsyncDisposable>();
  });
});
