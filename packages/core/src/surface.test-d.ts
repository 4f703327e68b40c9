import { describe, expectTypeOf, it } from "vitest";
import type * as main from "./index.js";
import type * as internal from "./internal.js";

describe("entry points", () => {
  it("keeps the toolkit's plumbing in @x/core/internal", () => {
    expectTypeOf<typeof main>().not.toHaveProperty("parseOptions");
    expectTypeOf<typeof main>().not.toHaveProperty("parseCommandLine");
    expectTypeOf<typeof main>().not.toHaveProperty("requireOptionalPeer");
    expectTypeOf<typeof main>().not.toHaveProperty("parseDurationMs");
    expectTypeOf<typeof internal>().toHaveProperty("parseOptions");
    expectTypeOf<typeof internal>().toHaveProperty("requireOptionalPeer");
    expectTypeOf<typeof main>().toHaveProperty("XError");
  });
});
