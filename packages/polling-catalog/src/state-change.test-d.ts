import { describe, expectTypeOf, it } from "vitest";
import type { PollingErmrestCatalog, Row, RowTransform, StateChange, StateChangeOptions } from "./index.js";

declare const catalog: PollingErmrestCatalog;
const query = "/entity/S:Job/state=new?limit=1";
const update = "/attributegroup/S:Job/RID;state";

describe("stateChangeOnce() types", () => {
  it("a row is a JSON object of unknown values", () => {
    expectTypeOf<Row>().toEqualTypeOf<Record<string, unknown>>();
  });

  it("a transform maps a row to an update or drops it, sync or async", () => {
    expectTypeOf<RowTransform>().toEqualTypeOf<
      (row: Row) => Row | null | undefined | Promise<Row | null | undefined>
    >();
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, (row) => ({
      RID: row.RID,
      state: "queued",
    }));
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, async () => null);
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, () => undefined);
    catalog.stateChangeOnce(query, update, (row) => {
      expectTypeOf(row).toEqualTypeOf<Row>();
      // Values are unknown: the transform must check them before use.
      expectTypeOf(row.state).toEqualTypeOf<unknown>();
      return null;
    });
  });

  it("rejects a transform returning something other than a row", () => {
    // @ts-expect-error: a boolean is not an update
    catalog.stateChangeOnce(query, update, () => true);
    // @ts-expect-error: an update is one row, not a list
    catalog.stateChangeOnce(query, update, async (row) => [row]);
    // @ts-expect-error: the transform is required
    catalog.stateChangeOnce(query, update);
  });

  it("threads idleEtag: string, null or omitted", () => {
    expectTypeOf(catalog.stateChangeOnce).parameters.toEqualTypeOf<
      [
        queryPath: string,
        updatePath: string,
        transform: RowTransform,
        idleEtag?: string | null,
        options?: StateChangeOptions,
      ]
    >();
    expectTypeOf<StateChangeOptions>().toEqualTypeOf<{
      spread?: boolean;
      claimRows?: number;
      signal?: AbortSignal;
    }>();
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, () => null, null, { spread: true });
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, () => null, '"etag"');
    expectTypeOf(catalog.stateChangeOnce).toBeCallableWith(query, update, () => null, null);
  });

  it("resolves with the idle ETag and the [candidate, update] pairs", () => {
    expectTypeOf(catalog.stateChangeOnce(query, update, () => null)).toEqualTypeOf<Promise<StateChange>>();
    expectTypeOf<StateChange>().toEqualTypeOf<{
      idleEtag: string | null;
      batch: Array<[candidate: Row, update: Row]>;
    }>();
  });
});

describe("blockingPoll()'s lookForWork", () => {
  it("takes any function of no argument, sync or async", () => {
    expectTypeOf(catalog.blockingPoll).toBeCallableWith(() => true);
    expectTypeOf(catalog.blockingPoll).toBeCallableWith(async () => {
      const { batch } = await catalog.stateChangeOnce(query, update, () => null);
      return batch.length > 0;
    });
    // @ts-expect-error: lookForWork is called with no argument
    catalog.blockingPoll((page: number) => page);
  });
});
