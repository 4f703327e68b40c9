import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import {
  Checkpoint,
  type CheckpointOptions,
  Dependency,
  type DependencyOptions,
  type HeartbeatResult,
  MemoryCache,
} from "./index.js";

declare const cp: Checkpoint;
declare const options: CheckpointOptions;

describe("Checkpoint construction", () => {
  it("has a public constructor taking exactly (name, options)", () => {
    expectTypeOf(Checkpoint).constructorParameters.toEqualTypeOf<
      [name: string, options: CheckpointOptions]
    >();
    expectTypeOf(new Checkpoint("pricing", options)).toEqualTypeOf<Checkpoint>();
    // @ts-expect-error: the snapshot that open() reads is internal, not a third parameter
    new Checkpoint("pricing", options, { state: {}, stateMarker: undefined, dependencies: [] });
  });

  it("has a static async open(name, options) for asynchronous caches", () => {
    expectTypeOf(Checkpoint.open).toEqualTypeOf<
      (name: string, options: CheckpointOptions) => Promise<Checkpoint>
    >();
    expectTypeOf(
      Checkpoint.open("pricing", { dependencies: [new Dependency("prices")], cache: new MemoryCache() }),
    ).resolves.toEqualTypeOf<Checkpoint>();
  });

  it("keeps its internals out of the package's exports", () => {
    expectTypeOf<typeof api>().not.toHaveProperty("recordOf");
    expectTypeOf<typeof api>().not.toHaveProperty("CallLock");
  });
});

describe("Checkpoint members", () => {
  it("exposes read-only facts", () => {
    expectTypeOf(cp.name).toEqualTypeOf<string>();
    expectTypeOf(cp.dependent).toEqualTypeOf<unknown>();
    expectTypeOf(cp.pauseDependent).toEqualTypeOf<boolean>();
    expectTypeOf(cp.dependencies).toEqualTypeOf<ReadonlyMap<string, Dependency>>();
    expectTypeOf(cp.state).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(cp.stateMarker).toEqualTypeOf<unknown>();
    expectTypeOf(cp.dependency("prices")).toEqualTypeOf<Dependency>();
    // @ts-expect-error: name is read-only
    cp.name = "other";
  });

  it("types checkPulse and heartbeat", () => {
    expectTypeOf(cp.checkPulse).toBeCallableWith(new Date(), { offset: 1 });
    expectTypeOf(cp.checkPulse(new Date())).toEqualTypeOf<Promise<unknown>>();
    expectTypeOf(cp.heartbeat(new Date())).toEqualTypeOf<Promise<HeartbeatResult>>();
    expectTypeOf(cp.heartbeat).toBeCallableWith(new Date(), "prices");
    expectTypeOf<HeartbeatResult>().toEqualTypeOf<{
      isLate: boolean;
      dependentMarker: unknown;
      dependencyMarker: unknown;
    }>();
    // @ts-expect-error: the pulse state is an object of named values
    cp.checkPulse(new Date(), 42);
  });

  it("serialises to JSON", () => {
    expectTypeOf(cp.toJSON()).toEqualTypeOf<{
      state: Record<string, unknown>;
      stateMarker: unknown;
      checkpoints: Record<string, { checkpointState: unknown; checkpointMarker: unknown }>;
    }>();
  });
});

describe("Dependency construction", () => {
  it("has a public constructor taking (name, options?)", () => {
    expectTypeOf(Dependency).constructorParameters.toEqualTypeOf<
      [name: string, options?: DependencyOptions]
    >();
    expectTypeOf(new Dependency("prices")).toEqualTypeOf<Dependency>();
  });

  it("exposes its checkpoint read-only", () => {
    const dependency = new Dependency("prices");
    expectTypeOf(dependency.checkpointState).toEqualTypeOf<unknown>();
    expectTypeOf(dependency.checkpointMarker).toEqualTypeOf<unknown>();
    expectTypeOf(dependency.isDown).toEqualTypeOf<boolean>();
    // @ts-expect-error: only the owning checkpoint changes isDown
    dependency.isDown = true;
  });

  it("offers the default checks as static functions", () => {
    expectTypeOf(Dependency.defaultDowntimeCheck).toEqualTypeOf<
      (this: void, checkpoint: Checkpoint, dependency: Dependency) => number | undefined
    >();
    expectTypeOf(Dependency.defaultRecoveryCheck).toEqualTypeOf<
      (this: void, checkpoint: Checkpoint, dependency: Dependency) => boolean
    >();
  });
});
