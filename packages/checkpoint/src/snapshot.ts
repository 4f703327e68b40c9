import type { Cache } from "@x/core";
import { describeValue } from "@x/core/internal";
import type { CheckpointKeys } from "./cache-keys.js";
import { CheckpointError, ErrorCode } from "./errors.js";
import { isMissing } from "./markers.js";
import { isThenable } from "./thenable.js";

/** What a checkpoint loads from its cache before it takes over its dependencies. */
export interface Snapshot {
  state: Record<string, unknown>;
  stateMarker: unknown;
  dependencies: { checkpointState: unknown; checkpointMarker: unknown; isDown: boolean }[];
}

/** The part of an `@x/core` `Cache` that a checkpoint uses. */
export type CheckpointCache = Pick<Cache, "get" | "set">;

/** Whether `value` is a plain object: its prototype is `Object.prototype` or `null`. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Reads a snapshot from the cache, synchronously. A `get` that returns a thenable makes it throw
 * `ERR_X_CHECKPOINT_ASYNC_CACHE` (after handling that promise, so it is never an unhandled rejection).
 */
export function readSnapshotSync(cache: CheckpointCache, keys: CheckpointKeys): Snapshot {
  const steps = snapshotSteps(keys);
  let step = steps.next();
  while (!step.done) {
    const value = cache.get(step.value);
    if (isThenable(value)) {
      value.then(undefined, () => {});
      throw new CheckpointError(
        ErrorCode.ASYNC_CACHE,
        `the cache answered get(${JSON.stringify(step.value)}) with a promise; the Checkpoint constructor ` +
          "reads synchronously: use `await Checkpoint.open(name, options)` with an asynchronous cache",
      );
    }
    step = steps.next(value);
  }
  return step.value;
}

/** Reads a snapshot from the cache, awaiting every read. */
export async function readSnapshot(cache: CheckpointCache, keys: CheckpointKeys): Promise<Snapshot> {
  const steps = snapshotSteps(keys);
  let step = steps.next();
  while (!step.done) step = steps.next(await cache.get(step.value));
  return step.value;
}

/** The reads of a snapshot in order, each yielding a key and receiving its value, then the checks. */
function* snapshotSteps(keys: CheckpointKeys): Generator<string, Snapshot, unknown> {
  const state = yield keys.state;
  if (!isMissing(state) && !isPlainObject(state)) {
    throw new CheckpointError(
      ErrorCode.STATE_TYPE,
      `the cache holds ${describeValue(state)} at key ${JSON.stringify(keys.state)}, where a checkpoint ` +
        "keeps its state (expected a plain object)",
    );
  }
  const stateMarker = yield keys.stateMarker;
  const dependencies: Snapshot["dependencies"] = [];
  for (const dependency of keys.dependencies) {
    const checkpointState = yield dependency.state;
    const checkpointMarker = yield dependency.marker;
    const isDown = yield dependency.isDown;
    if (!isMissing(isDown) && typeof isDown !== "boolean") {
      throw new CheckpointError(
        ErrorCode.CORRUPT,
        `the cache holds ${describeValue(isDown)} at key ${JSON.stringify(dependency.isDown)} ` +
          "(expected true or false): the cache was written by something else or is corrupted",
      );
    }
    dependencies.push({
      checkpointState: checkpointState ?? undefined,
      checkpointMarker: checkpointMarker ?? undefined,
      isDown: isDown === true,
    });
  }
  return { state: state ?? {}, stateMarker: stateMarker ?? undefined, dependencies };
}
