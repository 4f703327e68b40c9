import { describe, expectTypeOf, it } from "vitest";
import type * as main from "./index.js";

describe("entry point", () => {
  it("starts a supervisor with startSupervisor only: the class is a type", () => {
    expectTypeOf<typeof main>().not.toHaveProperty("Supervisor");
    expectTypeOf<typeof main>().toHaveProperty("startSupervisor");
  });
});
