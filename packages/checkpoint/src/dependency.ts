import { durationMs, parseOptions, v } from "@x/core/internal";
import type { Checkpoint } from "./checkpoint.js";
import { describeObject } from "./describe.js";
import { CheckpointError, ErrorCode } from "./errors.js";
import { defaultCheckError, isValidDate, timeOf } from "./markers.js";
import { parseName } from "./name.js";

/**
 * A downtime or recovery check: called as `(checkpoint, dependency)`, synchronous or async. A thenable
 * result is awaited and the truthiness of its value decides.
 */
export type DependencyCheck = (checkpoint: Checkpoint, dependency: Dependency) => unknown;

/** Options of {@link Dependency}. */
export interface DependencyOptions {
  /** The dependency stream, kept for you as `dep.stream`; the checkpoint never reads or consumes it. Default `undefined`. */
  stream?: unknown;
  /**
   * How far the dependency's last marker may trail the dependent's before the default downtime check reports
   * a downtime, in milliseconds (strictly greater is downtime). Default `600_000` (10 minutes).
   */
  downtimeThresholdMs?: number;
  /** Decides, at every pulse, whether the dependency is down; truthy = down, and the value is the downtime. Default {@link Dependency.defaultDowntimeCheck}. */
  downtimeCheck?: DependencyCheck;
  /** Decides, at a heartbeat of a down dependency, whether it has recovered; truthy = recovered. Default {@link Dependency.defaultRecoveryCheck}. */
  recoveryCheck?: DependencyCheck;
}

/** The mutable part of a dependency, changed only by the checkpoint that owns it. */
export interface DependencyRecord {
  checkpointState: unknown;
  checkpointMarker: unknown;
  isDown: boolean;
  owner: object | undefined;
}

const check = v.custom<DependencyCheck>((value) => typeof value === "function", {
  error: "a function (checkpoint, dependency) => unknown",
});

const schema = v.strictObject({
  stream: v.unknown().optional(),
  downtimeThresholdMs: durationMs().default(600_000),
  downtimeCheck: check.optional(),
  recoveryCheck: check.optional(),
});

/**
 * The record of every dependency constructed, for the checkpoint that takes it over; a dependency's own
 * getters read its `#record` field, the same object.
 */
const records = new WeakMap<Dependency, DependencyRecord>();

/**
 * The record behind `dependency`, which only the checkpoint that owns it changes. Internal: not exported
 * from the package.
 */
export function recordOf(dependency: Dependency): DependencyRecord {
  return records.get(dependency)!;
}

/**
 * One dependency stream of a {@link Checkpoint}: its name, its downtime threshold and checks, and the
 * checkpoint saved for it (the dependent's state and marker at its last heartbeat).
 *
 * The name is part of the cache keys: never rename a dependency whose checkpoint is persisted.
 *
 * @example
 * ```ts
 * const weather = new Dependency("weather", { stream: weatherFeed, downtimeThresholdMs: 3_600_000 });
 * ```
 */
export class Dependency {
  /** The dependency's name, unique within its checkpoint. */
  readonly name: string;
  /** The stream given as `stream`, untouched. */
  readonly stream: unknown;
  /** The threshold of the default downtime check, in milliseconds. */
  readonly downtimeThresholdMs: number;
  /** The downtime check that was given, else {@link Dependency.defaultDowntimeCheck}. */
  readonly downtimeCheck: DependencyCheck;
  /** The recovery check that was given, else {@link Dependency.defaultRecoveryCheck}. */
  readonly recoveryCheck: DependencyCheck;
  readonly #record: DependencyRecord = {
    checkpointState: undefined,
    checkpointMarker: undefined,
    isDown: false,
    owner: undefined,
  };

  /**
   * @param name - a non-empty string; part of the cache keys
   * @param options - stream, threshold (ms) and checks; see {@link DependencyOptions}
   * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` for a bad name or option, naming it and the value
   */
  constructor(name: string, options: DependencyOptions = {}) {
    this.name = parseName(name);
    const parsed = parseOptions(schema, options, ErrorCode.INVALID_OPTION, CheckpointError);
    this.stream = parsed.stream;
    this.downtimeThresholdMs = parsed.downtimeThresholdMs;
    this.downtimeCheck = parsed.downtimeCheck ?? Dependency.defaultDowntimeCheck;
    this.recoveryCheck = parsed.recoveryCheck ?? Dependency.defaultRecoveryCheck;
    records.set(this, this.#record);
  }

  /** A snapshot of the dependent's state taken at this dependency's last heartbeat; undefined until then. */
  get checkpointState(): unknown {
    return this.#record.checkpointState;
  }

  /** The marker of this dependency's last heartbeat (or of the first pulse); undefined until then. */
  get checkpointMarker(): unknown {
    return this.#record.checkpointMarker;
  }

  /** Whether a downtime episode is in progress; false until a downtime check reports one. */
  get isDown(): boolean {
    return this.#record.isDown;
  }

  /**
   * The default downtime check: the gap `checkpoint.stateMarker − dependency.checkpointMarker` in
   * milliseconds when it is strictly greater than `dependency.downtimeThresholdMs`, else `undefined`.
   *
   * @throws `ERR_X_CHECKPOINT_MARKER_TYPE` unless both markers are valid Dates
   */
  static defaultDowntimeCheck(
    this: void,
    checkpoint: Checkpoint,
    dependency: Dependency,
  ): number | undefined {
    const { stateMarker } = checkpoint;
    const { checkpointMarker } = dependency;
    if (!isValidDate(stateMarker) || !isValidDate(checkpointMarker)) {
      throw defaultCheckError("downtime", stateMarker, checkpointMarker);
    }
    const gap = timeOf(stateMarker) - timeOf(checkpointMarker);
    return gap > dependency.downtimeThresholdMs ? gap : undefined;
  }

  /**
   * The default recovery check: whether `dependency.checkpointMarker` is strictly later than
   * `checkpoint.stateMarker`. A dependency that only caught up to the same time is still late.
   *
   * @throws `ERR_X_CHECKPOINT_MARKER_TYPE` unless both markers are valid Dates
   */
  static defaultRecoveryCheck(this: void, checkpoint: Checkpoint, dependency: Dependency): boolean {
    const { stateMarker } = checkpoint;
    const { checkpointMarker } = dependency;
    if (!isValidDate(stateMarker) || !isValidDate(checkpointMarker)) {
      throw defaultCheckError("recovery", stateMarker, checkpointMarker);
    }
    return timeOf(checkpointMarker) > timeOf(stateMarker);
  }

  /** `{ checkpointState, checkpointMarker }`: both keys always present. */
  toJSON(): { checkpointState: unknown; checkpointMarker: unknown } {
    return { checkpointState: this.#record.checkpointState, checkpointMarker: this.#record.checkpointMarker };
  }

  /** `Dependency(<name>) { … }`; never throws. */
  toString(): string {
    return describeObject("Dependency", this.name, () => ({ ...this.toJSON(), isDown: this.#record.isDown }));
  }
}
