import { describe, expectTypeOf, it } from "vitest";
import { Backoff, type BackoffOptions } from "./backoff.js";

describe("Backoff types", () => {
  it("takes its durations in ms", () => {
    expectTypeOf<BackoffOptions>().toHaveProperty("initialMs").toEqualTypeOf<number | undefined>();
    expectTypeOf(new Backoff().next()).toEqualTypeOf<number>();
  });
});
