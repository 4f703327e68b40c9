import { EventEmitter } from "node:events";
import type { Logger } from "@x/core";
import { describeValue } from "@x/core/internal";
import { type CheckpointKeys, checkpointKeys, type DependencyKeys } from "./cache-keys.js";
import { CallLock } from "./call-lock.js";
import {
  type CheckpointCallback,
  type CheckpointOptions,
  parseCheckpointOptions,
} from "./checkpoint-options.js";
import { Dependency, type DependencyRecord, recordOf } from "./dependency.js";
import { describeObject } from "./describe.js";
import { CheckpointError, ErrorCode } from "./errors.js";
import { dateMarkerError, isMissing, isValidDate, missingMarkerError } from "./markers.js";
import { parseName } from "./name.js";
import { type CheckpointCache, readSnapshot, readSnapshotSync, type Snapshot } from "./snapshot.js";
import { snapshotState, validateState } from "./state.js";
import { isThenable } from "./thenable.js";

/** Events of a {@link Checkpoint}. Listeners run synchronously; one that throws makes the call reject. */
export interface CheckpointEvents {
  /** A dependency's downtime episode starts: emitted after the pause, before the downtime callback. */
  down: [dependency: Dependency, downtime: unknown];
  /** A dependency recovers, even while others are still down: emitted before the recovery callback. */
  up: [dependency: Dependency];
}

/** What {@link Checkpoint.heartbeat} resolves to. */
export interface HeartbeatResult {
  /** Whether the dependency is (still) down after this heartbeat: its record arrived late. */
  isLate: boolean;
  /** The dependent's marker at the last pulse. */
  dependentMarker: unknown;
  /** This heartbeat's marker. */
  dependencyMarker: unknown;
}

/** An object whose `pause()` and `resume()` the checkpoint calls. */
interface PausableDependent {
  pause(): unknown;
  resume(): unknown;
}

/** One dependency as the checkpoint tracks it. */
interface Entry {
  readonly dependency: Dependency;
  readonly record: DependencyRecord;
  readonly keys: DependencyKeys;
  /** Whether one of its checks is a default one, which compares Date markers. */
  readonly comparesDates: boolean;
  /** The last truthy downtime check result of the current episode; `true` for an episode loaded from the cache. */
  downtime: unknown;
}

/**
 * A snapshot that {@link Checkpoint.open} has read, handed to the constructor, which then does not read the
 * cache itself. Only this module creates one, so a third constructor argument of any other kind (from
 * JavaScript) is ignored.
 */
class Preloaded {
  constructor(readonly snapshot: Snapshot) {}
}

/**
 * The constructor's implementation signature, which only {@link Checkpoint.open} calls: the public
 * signature has no third parameter.
 */
type PreloadingConstructor = new (
  name: string,
  options: CheckpointOptions,
  preloaded: Preloaded | undefined,
) => Checkpoint;

/**
 * Watches one dependent stream and its dependency streams. The dependent reports its progress with
 * {@link Checkpoint.checkPulse}, each dependency with {@link Checkpoint.heartbeat}. When a dependency trails
 * the dependent by more than its threshold, the dependent is paused and `downtimeCallback` runs, once per
 * episode; when every down dependency has caught up, `recoveryCallback` runs with the snapshot of the
 * dependent's state taken during the downtime, then the dependent resumes. With a cache, everything
 * persists, so a restart continues where it stopped.
 *
 * Calls on one checkpoint run one at a time, in call order.
 *
 * @example
 * ```ts
 * const cp = new Checkpoint("enrich", { dependent, dependencies: [new Dependency("prices")] });
 * await cp.checkPulse(new Date(event.time), { offset: event.offset });
 * await cp.heartbeat(new Date(price.time));
 * ```
 */
export class Checkpoint extends EventEmitter<CheckpointEvents> {
  /** The checkpoint's name; part of the cache keys. */
  readonly name: string;
  /** The dependent given in the options. */
  readonly dependent: unknown;
  /** Whether a pausable dependent is paused during downtimes. */
  readonly pauseDependent: boolean;
  /** The dependencies by name, in the order given. */
  readonly dependencies: ReadonlyMap<string, Dependency>;
  readonly #entries: readonly Entry[];
  readonly #byName: ReadonlyMap<string, Entry>;
  readonly #keys: CheckpointKeys;
  readonly #cache: CheckpointCache | undefined;
  readonly #pausable: PausableDependent | undefined;
  readonly #logger: Logger;
  readonly #downtimeCallback: CheckpointCallback | undefined;
  readonly #recoveryCallback: CheckpointCallback | undefined;
  /** The first dependency with a default check, whose name a marker error gives. */
  readonly #datesFor: Entry | undefined;
  #state: Record<string, unknown> = {};
  #stateMarker: unknown;
  #downCount = 0;
  /** A failure of the pause at load, for the next call to reject with. */
  #pendingError: { reason: unknown } | undefined;
  #initialPause: Promise<void> | undefined;
  /** Serialises the calls. */
  readonly #lock = new CallLock();

  /**
   * Creates a checkpoint and, with a cache, loads its state synchronously.
   *
   * @param name - a non-empty string; part of the cache keys
   * @param options - see {@link CheckpointOptions}
   * @throws `ERR_X_CHECKPOINT_INVALID_OPTION`, `ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY`,
   *   `ERR_X_CHECKPOINT_ASYNC_CACHE` (use {@link Checkpoint.open}), `ERR_X_CHECKPOINT_STATE_TYPE` or
   *   `ERR_X_CHECKPOINT_CORRUPT` for a stored value of the wrong type, or the cache's own error
   */
  constructor(name: string, options: CheckpointOptions);
  constructor(name: string, options: CheckpointOptions, preloaded?: Preloaded) {
    super();
    this.name = parseName(name);
    const parsed = parseCheckpointOptions(options);
    const dependencies = parsed.dependencies;
    this.#keys = checkpointKeys(
      parsed.cacheKeyPrefix,
      this.name,
      dependencies.map((dependency) => dependency.name),
    );
    this.#cache = parsed.cache;
    const snapshot =
      preloaded instanceof Preloaded
        ? preloaded.snapshot
        : parsed.cache
          ? readSnapshotSync(parsed.cache, this.#keys)
          : undefined;

    this.dependent = parsed.dependent;
    this.pauseDependent = parsed.pauseDependent;
    this.#pausable = parsed.pauseDependent && isPausable(parsed.dependent) ? parsed.dependent : undefined;
    this.#logger = parsed.logger;
    this.#downtimeCallback = parsed.downtimeCallback;
    this.#recoveryCallback = parsed.recoveryCallback;
    this.dependencies = new Map(dependencies.map((dependency) => [dependency.name, dependency]));
    this.#entries = dependencies.map((dependency, index) => ({
      dependency,
      record: recordOf(dependency),
      keys: this.#keys.dependencies[index]!,
      comparesDates:
        dependency.downtimeCheck === Dependency.defaultDowntimeCheck ||
        dependency.recoveryCheck === Dependency.defaultRecoveryCheck,
      downtime: true,
    }));
    this.#byName = new Map(this.#entries.map((entry) => [entry.dependency.name, entry]));
    this.#datesFor = this.#entries.find((entry) => entry.comparesDates);

    for (const entry of this.#entries) entry.record.owner = this;
    if (snapshot) this.#apply(snapshot);
    if (this.#downCount > 0) this.#pauseAfterLoad();
  }

  /**
   * Creates a checkpoint, awaiting every read of the cache: the way to use an asynchronous cache (it works
   * with synchronous ones too). When a dependency loads as down, it also awaits the dependent's `pause()`.
   *
   * @param name - a non-empty string; part of the cache keys
   * @param options - see {@link CheckpointOptions}
   * @returns the checkpoint, once loaded
   * @throws (rejects with) the errors of the constructor, or the error of the dependent's `pause()`
   */
  static async open(name: string, options: CheckpointOptions): Promise<Checkpoint> {
    parseName(name);
    const parsed = parseCheckpointOptions(options);
    let preloaded: Preloaded | undefined;
    if (parsed.cache) {
      const keys = checkpointKeys(
        parsed.cacheKeyPrefix,
        name,
        parsed.dependencies.map((dependency) => dependency.name),
      );
      preloaded = new Preloaded(await readSnapshot(parsed.cache, keys));
    }
    const checkpoint = new (Checkpoint as unknown as PreloadingConstructor)(name, options, preloaded);
    await checkpoint.#initialPause;
    const failure = checkpoint.#pendingError;
    if (failure) {
      checkpoint.#disown();
      throw failure.reason;
    }
    return checkpoint;
  }

  /** The merged dependent state, `{}` at first. Read it only: direct changes bypass persistence. */
  get state(): Record<string, unknown> {
    return this.#state;
  }

  /** The marker of the last pulse; undefined until the first one. */
  get stateMarker(): unknown {
    return this.#stateMarker;
  }

  /**
   * The dependency with that name.
   *
   * @throws `ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY` for any other name
   */
  dependency(name: string): Dependency {
    const entry = this.#byName.get(name);
    if (!entry) throw unknownDependency(name, this.#byName.keys());
    return entry.dependency;
  }

  /**
   * Records that a dependency has produced data up to `marker`: saves a snapshot of the dependent's state
   * and the marker as that dependency's checkpoint, and, when the dependency is down, runs its recovery
   * check. Never runs the downtime check.
   *
   * @param marker - the dependency's event time (a `Date` where a default check applies), any value but
   *   null and undefined
   * @param dependencyName - which dependency; required when there are several
   * @returns `{ isLate, dependentMarker, dependencyMarker }`
   * @throws (rejects with) `ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY`, `ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED`,
   *   `ERR_X_CHECKPOINT_MARKER_TYPE` before changing anything; or the error of a check, callback, listener,
   *   `resume()` or the cache
   */
  async heartbeat(marker: unknown, dependencyName?: string): Promise<HeartbeatResult> {
    const turn = this.#lock.acquire();
    if (turn) await turn;
    try {
      this.#throwPending();
      const entry = this.#target(dependencyName);
      if (isMissing(marker)) throw missingMarkerError(marker);
      if (entry.comparesDates && !isValidDate(marker)) throw dateMarkerError(marker, entry.dependency.name);
      const { record, dependency } = entry;
      const wasDown = record.isDown;
      const saving = this.#saveCheckpoint(entry, marker);
      if (saving) await saving;
      if (wasDown) {
        let recovered = dependency.recoveryCheck(this, dependency);
        if (isThenable(recovered)) recovered = await recovered;
        if (recovered) await this.#recover(entry);
      }
      return {
        isLate: record.isDown,
        dependentMarker: this.#stateMarker,
        dependencyMarker: record.checkpointMarker,
      };
    } finally {
      this.#lock.release();
    }
  }

  /**
   * Records the dependent's progress: merges `state` into {@link Checkpoint.state}, sets the marker, then runs
   * every dependency's downtime check. A dependency found down starts a downtime episode: the dependent is
   * paused, `down` is emitted and `downtimeCallback` runs, once per episode.
   *
   * @param marker - the dependent's event time (a `Date` where a default check applies), any value but
   *   null and undefined
   * @param state - keys to merge into the dependent state (offsets, for example): a plain object whose
   *   values are structured-cloneable. Default none.
   * @returns `undefined` when no dependency is down, else the largest downtime (ms with the default check)
   * @throws (rejects with) `ERR_X_CHECKPOINT_MARKER_TYPE` or `ERR_X_CHECKPOINT_STATE_TYPE` before changing
   *   anything; or the error of a check, callback, listener, `pause()` or the cache
   */
  async checkPulse(marker: unknown, state?: Record<string, unknown>): Promise<unknown> {
    const turn = this.#lock.acquire();
    if (turn) await turn;
    try {
      this.#throwPending();
      if (isMissing(marker)) throw missingMarkerError(marker);
      if (this.#datesFor && !isValidDate(marker))
        throw dateMarkerError(marker, this.#datesFor.dependency.name);
      if (state !== undefined) {
        validateState(state);
        this.#state = { ...this.#state, ...state };
      }
      this.#stateMarker = marker;
      const writing = this.#write(this.#keys.state, this.#state, this.#keys.stateMarker, marker);
      if (writing) await writing;
      for (const entry of this.#entries) {
        const { dependency, record } = entry;
        if (isMissing(record.checkpointMarker)) {
          const saving = this.#saveCheckpoint(entry, marker);
          if (saving) await saving;
        }
        let downtime = dependency.downtimeCheck(this, dependency);
        if (isThenable(downtime)) downtime = await downtime;
        if (!downtime) continue;
        entry.downtime = downtime;
        if (!record.isDown) await this.#startDowntime(entry, downtime);
      }
      return this.#downCount === 0 ? undefined : this.#largestDowntime();
    } finally {
      this.#lock.release();
    }
  }

  /** `{ state, stateMarker, checkpoints }`, where `checkpoints` maps each dependency name, in order, to its `toJSON()`. */
  toJSON(): {
    state: Record<string, unknown>;
    stateMarker: unknown;
    checkpoints: Record<string, ReturnType<Dependency["toJSON"]>>;
  } {
    return {
      state: this.#state,
      stateMarker: this.#stateMarker,
      checkpoints: Object.fromEntries(
        this.#entries.map(({ dependency }) => [dependency.name, dependency.toJSON()]),
      ),
    };
  }

  /** `Checkpoint(<name>) { … }`; never throws. */
  override toString(): string {
    return describeObject("Checkpoint", this.name, () => this.toJSON());
  }

  /** The dependency a heartbeat is for. */
  #target(name: string | undefined): Entry {
    if (isMissing(name)) {
      if (this.#entries.length === 1) return this.#entries[0]!;
      throw new CheckpointError(
        ErrorCode.DEPENDENCY_REQUIRED,
        `checkpoint ${JSON.stringify(this.name)} has ${this.#entries.length} dependencies: name the one ` +
          "this heartbeat is for",
      );
    }
    const entry = this.#byName.get(name);
    if (!entry) throw unknownDependency(name, this.#byName.keys());
    return entry;
  }

  /**
   * Saves a snapshot of the dependent state and `marker` as the dependency's checkpoint. Returns the writes
   * in flight, or `undefined` without a cache.
   */
  #saveCheckpoint(entry: Entry, marker: unknown): Promise<void> | undefined {
    const snapshot = snapshotState(this.#state);
    entry.record.checkpointState = snapshot;
    entry.record.checkpointMarker = marker;
    return this.#write(entry.keys.state, snapshot, entry.keys.marker, marker);
  }

  async #startDowntime(entry: Entry, downtime: unknown): Promise<void> {
    const { dependency, record } = entry;
    record.isDown = true;
    this.#downCount++;
    this.#logger.debug(
      { checkpoint: this.name, dependency: dependency.name, downtime: describeValue(downtime) },
      "dependency down: downtime starts",
    );
    await this.#write(entry.keys.isDown, true);
    if (this.#pausable) await this.#pausable.pause();
    this.emit("down", dependency, downtime);
    if (this.#downtimeCallback) await this.#downtimeCallback(this, dependency);
  }

  async #recover(entry: Entry): Promise<void> {
    const { dependency, record } = entry;
    record.isDown = false;
    entry.downtime = true;
    this.#downCount--;
    this.#logger.debug(
      { checkpoint: this.name, dependency: dependency.name, stillDown: this.#downCount },
      "dependency up: downtime ends",
    );
    await this.#write(entry.keys.isDown, false);
    let failure: { error: unknown } | undefined;
    try {
      this.emit("up", dependency);
    } catch (error) {
      failure = { error };
    }
    if (this.#downCount > 0) {
      if (failure) throw failure.error;
      return;
    }
    if (!failure && this.#recoveryCallback) {
      try {
        await this.#recoveryCallback(this, dependency);
      } catch (error) {
        failure = { error };
      }
    }
    if (this.#pausable) {
      try {
        await this.#pausable.resume();
      } catch (error) {
        if (!failure) throw error;
        this.#logger.warn({ checkpoint: this.name, error }, "the dependent's resume() failed too");
      }
    }
    if (failure) throw failure.error;
  }

  /**
   * The largest numeric downtime of the down dependencies, else the first one's (Slipstream returned the last
   * dependency's result instead).
   */
  #largestDowntime(): unknown {
    let first: unknown;
    let largest: number | bigint | undefined;
    for (const { record, downtime } of this.#entries) {
      if (!record.isDown) continue;
      if (first === undefined) first = downtime;
      if (
        (typeof downtime === "number" || typeof downtime === "bigint") &&
        (largest === undefined || downtime > largest)
      ) {
        largest = downtime;
      }
    }
    return largest ?? first;
  }

  /**
   * Writes `key = value` pairs to the cache, in order. It stays synchronous while the cache answers
   * synchronously, and returns a promise only from the first `set` that returns a thenable, awaiting it
   * before the next write. Without a cache it does nothing.
   */
  #write(...pairs: unknown[]): Promise<void> | undefined {
    const cache = this.#cache;
    if (!cache) return undefined;
    for (let index = 0; index < pairs.length; index += 2) {
      const written = cache.set(pairs[index] as string, pairs[index + 1]);
      if (isThenable(written)) return this.#writeAfter(written, pairs, index + 2);
    }
    return undefined;
  }

  async #writeAfter(pending: PromiseLike<unknown>, pairs: unknown[], from: number): Promise<void> {
    await pending;
    const rest = this.#write(...pairs.slice(from));
    if (rest) await rest;
  }

  /** Rejects the first call after a failed pause at load (see {@link Checkpoint.#pauseAfterLoad}). */
  #throwPending(): void {
    const failure = this.#pendingError;
    if (!failure) return;
    this.#pendingError = undefined;
    throw failure.reason;
  }

  #apply(snapshot: Snapshot): void {
    this.#state = snapshot.state;
    this.#stateMarker = snapshot.stateMarker;
    snapshot.dependencies.forEach((loaded, index) => {
      const { record } = this.#entries[index]!;
      record.checkpointState = loaded.checkpointState;
      record.checkpointMarker = loaded.checkpointMarker;
      record.isDown = loaded.isDown;
      if (loaded.isDown) this.#downCount++;
    });
  }

  /** A restart during a downtime pauses the dependent before the first message. */
  #pauseAfterLoad(): void {
    if (!this.#pausable) return;
    let paused: unknown;
    try {
      paused = this.#pausable.pause();
    } catch (reason) {
      this.#pendingError = { reason };
      return;
    }
    if (!isThenable(paused)) return;
    this.#lock.acquire(); // free during construction: taken at once, until the pause settles
    this.#initialPause = Promise.resolve(paused).then(
      () => this.#lock.release(),
      (reason: unknown) => {
        this.#pendingError = { reason };
        this.#lock.release();
      },
    );
  }

  /** Undoes the takeover of the dependencies after a failed `open`. */
  #disown(): void {
    for (const { record } of this.#entries) {
      Object.assign(record, {
        checkpointState: undefined,
        checkpointMarker: undefined,
        isDown: false,
        owner: undefined,
      });
    }
  }
}

function isPausable(value: unknown): value is PausableDependent {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return false;
  const candidate = value as Partial<PausableDependent>;
  return typeof candidate.pause === "function" && typeof candidate.resume === "function";
}

function unknownDependency(name: unknown, known: Iterable<string>): CheckpointError {
  return new CheckpointError(
    ErrorCode.UNKNOWN_DEPENDENCY,
    `unknown dependency ${describeValue(name)} (expected one of ${[...known].map((n) => JSON.stringify(n)).join(", ")})`,
  );
}
