import { describe, expectTypeOf, it } from "vitest";
import type { Checkpoint, CheckpointEvents, Dependency } from "./index.js";

declare const cp: Checkpoint;

describe("CheckpointEvents", () => {
  it("maps exactly the down and up events to their arguments", () => {
    expectTypeOf<keyof CheckpointEvents>().toEqualTypeOf<"down" | "up">();
    expectTypeOf<CheckpointEvents["down"]>().toEqualTypeOf<[dependency: Dependency, downtime: unknown]>();
    expectTypeOf<CheckpointEvents["up"]>().toEqualTypeOf<[dependency: Dependency]>();
  });
});

describe("cp.on()", () => {
  it("infers the listener parameters of down: the dependency and its downtime", () => {
    cp.on("down", (dependency, downtime) => {
      expectTypeOf(dependency).toEqualTypeOf<Dependency>();
      expectTypeOf(downtime).toEqualTypeOf<unknown>();
      expectTypeOf(dependency.isDown).toEqualTypeOf<boolean>();
    });
  });

  it("infers the listener parameter of up: the dependency", () => {
    cp.once("up", (dependency, ...rest) => {
      expectTypeOf(dependency).toEqualTypeOf<Dependency>();
      expectTypeOf(rest).toEqualTypeOf<[]>();
    });
  });

  it("returns the checkpoint itself for chaining", () => {
    expectTypeOf(cp.on("up", () => {})).toEqualTypeOf<Checkpoint>();
  });

  it("rejects a listener that expects more than an event passes, and unknown events", () => {
    // @ts-expect-error: up passes only the dependency
    cp.on("up", (_dependency: Dependency, _downtime: number) => {});
    // @ts-expect-error: there is no paused event
    cp.on("paused", () => {});
  });

  it("types emit() with the event's arguments", () => {
    expectTypeOf(cp.emit("up", {} as Dependency)).toEqualTypeOf<boolean>();
    // @ts-expect-error: down needs the downtime too
    cp.emit("down", {} as Dependency);
  });
});
