import type { Logger } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import {
  Checkpoint,
  type CheckpointCache,
  type CheckpointCallback,
  type CheckpointOptions,
  Dependency,
  type DependencyCheck,
  type DependencyOptions,
} from "./index.js";

declare const dependency: Dependency;

describe("DependencyOptions", () => {
  it("lists exactly the documented options, all optional", () => {
    expectTypeOf<DependencyOptions>().toEqualTypeOf<{
      stream?: unknown;
      downtimeThresholdMs?: number;
      downtimeCheck?: DependencyCheck;
      recoveryCheck?: DependencyCheck;
    }>();
    expectTypeOf(Dependency).toBeConstructibleWith("prices");
    expectTypeOf(Dependency).toBeConstructibleWith("prices", {});
  });

  it("takes the threshold as a number of milliseconds", () => {
    expectTypeOf<Required<DependencyOptions>["downtimeThresholdMs"]>().toEqualTypeOf<number>();
    expectTypeOf(dependency.downtimeThresholdMs).toEqualTypeOf<number>();
    expectTypeOf(Dependency).toBeConstructibleWith("weather", { downtimeThresholdMs: 3_600_000 });
    // @ts-expect-error: a duration string is not a number of milliseconds
    new Dependency("weather", { downtimeThresholdMs: "1h" });
  });

  it("rejects the removed spellings of the threshold", () => {
    // @ts-expect-error: the pre-release name without its unit is gone
    new Dependency("weather", { downtimeThreshold: 3_600_000 });
    // @ts-expect-error: Slipstream's snake_case `downtime_threshold` is not an option
    new Dependency("weather", { downtime_threshold: 3_600_000 });
  });

  it("types the checks as (checkpoint, dependency) => unknown", () => {
    expectTypeOf<DependencyCheck>().toEqualTypeOf<
      (checkpoint: Checkpoint, dependency: Dependency) => unknown
    >();
    expectTypeOf(Dependency).toBeConstructibleWith("prices", {
      downtimeCheck: async (checkpoint: Checkpoint, dep: Dependency) =>
        checkpoint.stateMarker !== dep.checkpointMarker,
      recoveryCheck: () => true,
    });
    // @ts-expect-error: a check is a function
    new Dependency("prices", { recoveryCheck: true });
  });
});

describe("CheckpointOptions", () => {
  it("lists exactly the documented options, only dependencies required", () => {
    expectTypeOf<CheckpointOptions>().toEqualTypeOf<{
      dependent?: unknown;
      dependencies: readonly Dependency[];
      downtimeCallback?: CheckpointCallback;
      recoveryCallback?: CheckpointCallback;
      cache?: CheckpointCache;
      cacheKeyPrefix?: string;
      pauseDependent?: boolean;
      logger?: Logger;
    }>();
    expectTypeOf(Checkpoint).toBeConstructibleWith("pricing", { dependencies: [dependency] });
    // @ts-expect-error: dependencies are required
    new Checkpoint("pricing", {});
    // @ts-expect-error: options are required
    new Checkpoint("pricing");
  });

  it("accepts a readonly list of dependencies", () => {
    const dependencies = [dependency] as const;
    expectTypeOf(Checkpoint).toBeConstructibleWith("pricing", { dependencies });
    // @ts-expect-error: dependencies are Dependency objects, not names
    new Checkpoint("pricing", { dependencies: ["prices"] });
  });

  it("types the callbacks as (checkpoint, dependency) => unknown", () => {
    expectTypeOf<CheckpointCallback>().toEqualTypeOf<
      (checkpoint: Checkpoint, dependency: Dependency) => unknown
    >();
  });

  it("takes any cache with get and set, synchronous or not", () => {
    expectTypeOf<CheckpointCache>().toHaveProperty("get");
    expectTypeOf<CheckpointCache>().toHaveProperty("set");
    expectTypeOf<CheckpointCache>().not.toHaveProperty("delete");
    expectTypeOf<CheckpointCache>().not.toHaveProperty("has");
  });

  it("rejects unknown option names", () => {
    // @ts-expect-error: Slipstream's snake_case `cache_key_prefix` is not an option
    new Checkpoint("pricing", { dependencies: [dependency], cache_key_prefix: "p" });
  });
});
