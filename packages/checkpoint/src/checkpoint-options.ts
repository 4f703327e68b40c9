import type { Logger } from "@x/core";
import { loggerOption, optionError, parseOptions, v } from "@x/core/internal";
import { Dependency, recordOf } from "./dependency.js";
import { CheckpointError, ErrorCode } from "./errors.js";
import type { CheckpointCache } from "./snapshot.js";

/** A downtime or recovery callback: called as `(checkpoint, dependency)` and awaited; its result is ignored. */
export type CheckpointCallback = (
  checkpoint: import("./checkpoint.js").Checkpoint,
  dependency: Dependency,
) => unknown;

/** Options of `new Checkpoint(name, options)` and `Checkpoint.open(name, options)`. */
export interface CheckpointOptions {
  /**
   * The dependent stream. When it has both a `pause()` and a `resume()` method (a `pausable()` stream, an
   * engine adapter, an adapter around a Kafka consumer, …) the checkpoint pauses it during a downtime;
   * anything else is kept as is and never paused. A Node `Readable` is refused (unless `pauseDependent` is
   * false): its `pause()` does not stop a `for await` over it; pass `pausable(readable)` instead.
   * Default `undefined`.
   */
  dependent?: unknown;
  /** The dependency streams, in the order in which they are checked: at least one, with distinct names. Required. */
  dependencies: readonly Dependency[];
  /** Called once when a dependency's downtime episode starts, after the pause. May be async. Default none. */
  downtimeCallback?: CheckpointCallback;
  /** Called once when the last down dependency recovers, before the resume. May be async. Default none. */
  recoveryCallback?: CheckpointCallback;
  /**
   * Where the state persists: any `@x/core` `Cache` (only `get` and `set` are used). The constructor needs
   * synchronous reads; use {@link Checkpoint.open} for an asynchronous cache. Default none: the state lives
   * as long as the process.
   */
  cache?: CheckpointCache;
  /** The first part of every cache key (may be empty). Default `"_"`. */
  cacheKeyPrefix?: string;
  /** Whether to pause and resume a pausable dependent. Default `true`. */
  pauseDependent?: boolean;
  /** Gets one debug line at each downtime and recovery. Default `silentLogger`. */
  logger?: Logger;
}

const isObjectLike = (value: unknown): value is Record<PropertyKey, unknown> =>
  (typeof value === "object" && value !== null) || typeof value === "function";

/**
 * Whether `value` is a Node `Readable` (also a `Duplex`, a `Transform`, or one from the `readable-stream`
 * package): its async iterator reads with `read()`, which `pause()` does not stop.
 */
function isNodeReadable(value: unknown): boolean {
  return (
    isObjectLike(value) &&
    typeof value.read === "function" &&
    typeof value.pipe === "function" &&
    isObjectLike(value._readableState)
  );
}

const callback = v.custom<CheckpointCallback>((value) => typeof value === "function", {
  error: "a function (checkpoint, dependency) => unknown",
});

const nonEmpty = "a non-empty array of Dependency with distinct names";

const schema = v.strictObject({
  dependent: v.unknown().optional(),
  dependencies: v
    .array(v.instanceof(Dependency, { error: "a Dependency" }), { error: nonEmpty })
    .min(1, { error: nonEmpty }),
  downtimeCallback: callback.optional(),
  recoveryCallback: callback.optional(),
  cache: v
    .custom<CheckpointCache>(
      (value) => isObjectLike(value) && typeof value.get === "function" && typeof value.set === "function",
      { error: "a Cache with get(key) and set(key, value)" },
    )
    .optional(),
  cacheKeyPrefix: v.string({ error: "a string (may be empty)" }).default("_"),
  pauseDependent: v.boolean({ error: "true or false" }).default(true),
  logger: loggerOption,
});

/** Checkpoint options after validation, defaults applied. */
export type ParsedCheckpointOptions = v.Output<typeof schema>;

/**
 * Validates a checkpoint's options, before any dependency is taken over or the cache is read.
 *
 * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` naming the option and the value, also for a dependency that
 *   another checkpoint owns; `ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY` for two dependencies with one name
 */
export function parseCheckpointOptions(options: CheckpointOptions): ParsedCheckpointOptions {
  const parsed = parseOptions(schema, options, ErrorCode.INVALID_OPTION, CheckpointError);
  if (parsed.pauseDependent && isNodeReadable(parsed.dependent)) {
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "dependent",
      parsed.dependent,
      "a dependent whose pause() stops its consumer; a Node Readable keeps flowing under `for await` " +
        "after pause(): pass `pausable(readable)` as the dependent and iterate that, or set pauseDependent: false",
      CheckpointError,
    );
  }
  const names = new Set<string>();
  parsed.dependencies.forEach((dependency, index) => {
    if (names.has(dependency.name)) {
      throw new CheckpointError(
        ErrorCode.DUPLICATE_DEPENDENCY,
        `two dependencies are named ${JSON.stringify(dependency.name)} (dependencies.${index}); names must be distinct`,
      );
    }
    names.add(dependency.name);
    if (recordOf(dependency).owner !== undefined) {
      throw optionError(
        ErrorCode.INVALID_OPTION,
        `dependencies.${index}`,
        dependency,
        "a dependency that no other checkpoint owns",
        CheckpointError,
      );
    }
  });
  return parsed;
}
