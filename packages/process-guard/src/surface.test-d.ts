import { describe, expectTypeOf, it } from "vitest";
import type * as main from "./index.js";

describe("entry point", () => {
  it("builds guards with the timeGuard and memGuard factories only: the classes are types", () => {
    expectTypeOf<typeof main>().not.toHaveProperty("TimeGuard");
    expectTypeOf<typeof main>().not.toHaveProperty("MemGuard");
    expectTypeOf<typeof main>().toHaveProperty("timeGuard");
    expectTypeOf<typeof main>().toHaveProperty("memGuard");
  });
});
