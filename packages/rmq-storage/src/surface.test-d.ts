import { describe, expectTypeOf, it } from "vitest";
import type * as main from "./index.js";
import type * as routing from "./routing-entry.js";

describe("entry points", () => {
  it("keeps the routing and merge helpers in @x/rmq-storage/routing, not in the main entry", () => {
    expectTypeOf<typeof main>().not.toHaveProperty("routingKey");
    expectTypeOf<typeof main>().not.toHaveProperty("resolveDates");
    expectTypeOf<typeof routing>().toHaveProperty("splitRanges");
  });

  it("opens storages with the open functions only: the classes are types", () => {
    expectTypeOf<typeof main>().not.toHaveProperty("SqliteStorage");
    expectTypeOf<typeof main>().not.toHaveProperty("PostgresStorage");
    expectTypeOf<typeof main>().toHaveProperty("openSqliteStorage");
  });

  it("exports the teardown of a topology beside the factories", () => {
    expectTypeOf<typeof main>().toHaveProperty("deleteTopology");
    expectTypeOf<typeof main.deleteTopology>().returns.resolves.toEqualTypeOf<main.DeletedTopology>();
  });
});
