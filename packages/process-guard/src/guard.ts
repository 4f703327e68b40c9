import { EventEmitter } from "node:events";
import { Activation, type GuardHost } from "./activation.js";
import { enclosing, scopes } from "./context.js";
import type { ExecutionTimeout, GuardError, MemoryLimitExceeded } from "./errors.js";
import { holdProcess, releaseProcess } from "./keep-alive.js";
import {
  type MemConfig,
  type MemGuardOptions,
  memConfig,
  optionsSignal,
  type TimeConfig,
  type TimeGuardOptions,
  timeConfig,
} from "./options.js";
import { InProcessTarget, type InterruptReason, type Level } from "./targets.js";
import {
  type TimeWatchHandle,
  type WatchHandle,
  type WatchOptions,
  type WatchTarget,
  watchTarget,
} from "./watch-target.js";

/** Payload of the `"interrupt"` event: emitted after every escalation step has been taken. */
export interface InterruptEvent<E extends GuardError = GuardError> {
  level: Level;
  /** A new error per level, with `error.level === level`. The level-0 error is the signal's `reason`. */
  error: E;
  /** What the level did, in words: `"SIGINT to process group 1234"`, `"aborted the signal"`, … */
  action: string;
}

/** Payload of the `"warning"` event: level 2 was reached. */
export interface WarningEvent<E extends GuardError = GuardError> {
  level: 2;
  error: E;
  /** What level 2 actually did, in words. */
  message: string;
}

/** The events of a guard. */
export interface GuardEvents<E extends GuardError = GuardError> {
  interrupt: [event: InterruptEvent<E>];
  warning: [event: WarningEvent<E>];
}

/** Options of `run()`. */
export interface RunOptions {
  /** Aborting it aborts the task's signal with the same reason (no ladder, no event). */
  signal?: AbortSignal;
}

/** What `run()` passes to a MemGuard's task. */
export interface MemRunContext {
  /**
   * Aborted at level 0 with the guard's error as `reason`, or when an outer guard or `options.signal` aborts.
   * APIs given it reject with the reason or with an `AbortError` carrying it: test with `isInterrupt(error)`.
   */
  readonly signal: AbortSignal;
}

/** What `run()` passes to a TimeGuard's task. */
export interface TimeRunContext extends MemRunContext {
  /** Restarts this activation's time limit. */
  progress(): void;
}

/** A live in-process activation from `enter()`; dispose it (`using`) to end it. */
export interface ActiveGuard extends Disposable {
  readonly signal: AbortSignal;
}

/** A live TimeGuard activation from `enter()`. */
export interface ActiveTimeGuard extends ActiveGuard {
  progress(): void;
}

/** A function wrapped by `guard.wrap(fn)`: every call is a `run()`. */
export type Wrapped<A extends unknown[], R, G> = ((...args: A) => Promise<Awaited<R>>) & {
  /** The guard. */
  readonly guard: G;
};

/** A function wrapped by a TimeGuard. */
export type TimeWrapped<A extends unknown[], R> = Wrapped<A, R, TimeGuard> & {
  /** Restarts the innermost activation of the guard in the current context, else every active one. */
  progress(): void;
};

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** A TimeGuard task's context; `progress` is created on first access (destructuring included). */
class TimeContext implements TimeRunContext {
  readonly #activation: Activation;
  #progress: (() => void) | undefined;

  constructor(activation: Activation) {
    this.#activation = activation;
  }

  get signal(): AbortSignal {
    return this.#activation.signal;
  }

  get progress(): () => void {
    if (this.#progress === undefined) {
      const activation = this.#activation;
      this.#progress = () => activation.progress();
    }
    return this.#progress;
  }
}

class MemContext implements MemRunContext {
  readonly #activation: Activation;

  constructor(activation: Activation) {
    this.#activation = activation;
  }

  get signal(): AbortSignal {
    return this.#activation.signal;
  }
}

/**
 * What both guard kinds share: configuration, events, and the in-process ways to start an activation (`run`,
 * `wrap`, `enter`); each kind's `watch()` hands itself to {@link watchTarget}.
 */
abstract class Guard<E extends GuardError, Ctx> extends EventEmitter<GuardEvents<E>> implements GuardHost {
  readonly config: TimeConfig | MemConfig;
  /** Activations that have not ended. */
  readonly active = new Set<Activation>();
  readonly #inProcessTarget: InProcessTarget;
  protected abstract readonly reason: InterruptReason;

  protected constructor(config: TimeConfig | MemConfig) {
    super();
    this.config = config;
    this.#inProcessTarget = new InProcessTarget(config);
  }

  protected abstract context(activation: Activation): Ctx;

  /** @internal */
  emitSafe(event: "interrupt" | "warning", payload: object): void {
    for (const listener of this.rawListeners(event) as ((payload: object) => unknown)[]) {
      try {
        const result = listener.call(this, payload);
        if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.#listenerFailed(error));
      } catch (error) {
        this.#listenerFailed(error);
      }
    }
  }

  #listenerFailed(error: unknown): void {
    this.config.logger.error({ err: error }, "process-guard: an event listener threw");
  }

  /** Starts an in-process activation in the current context's chain. */
  #inProcess(signal: AbortSignal | undefined): Activation {
    const target = this.config.allowProcessSignals ? new InProcessTarget(this.config) : this.#inProcessTarget;
    return new Activation(this, {
      target,
      parent: enclosing(),
      signal,
      onExternal: "abort",
      ownProcess: true,
    });
  }

  /**
   * Runs `fn` under a new activation and settles with its result, or, when the ladder reaches level 2 first,
   * rejects with the level-2 error and leaves `fn` running (option `waitForTask: true` waits for it instead).
   * `fn` gets the activation's `signal` (and `progress` on a TimeGuard). After the signal aborted, an
   * `AbortError` with the signal's reason along its `cause` chain rejects as that reason: the guard's error.
   * Inside `fn`, recognise the interrupt with `isInterrupt(error)` and rethrow it, or a `catch` for ordinary
   * failures swallows it and `run()` resolves. Until it settles, the returned promise keeps the process alive.
   */
  run<R>(fn: (context: Ctx) => R, options?: RunOptions): Promise<Awaited<R>> {
    let activation: Activation;
    try {
      activation = this.#inProcess(optionsSignal(options, "options"));
    } catch (error) {
      return Promise.reject(error);
    }
    let result: unknown;
    try {
      result = scopes().run(activation, fn, this.context(activation));
    } catch (error) {
      activation.end();
      return Promise.reject(activation.mapRejection(error));
    }
    if (!isPromiseLike(result)) {
      activation.end();
      return Promise.resolve(result as Awaited<R>);
    }
    return settle(activation, result as PromiseLike<Awaited<R>>, this.config.waitForTask);
  }

  /**
   * The decorator form: each call of the returned function is a `run()` around `fn.apply(this, args)`.
   * `f.guard` is this guard.
   */
  protected wrapWith<A extends unknown[], R>(fn: (...args: A) => R): Wrapped<A, R, this> {
    const guard = this;
    const wrapped = function (this: unknown, ...args: A) {
      return guard.run(() => fn.apply(this, args));
    };
    Object.defineProperty(wrapped, "name", { value: fn.name, configurable: true });
    Object.defineProperty(wrapped, "guard", { value: this, enumerable: true });
    return wrapped as Wrapped<A, R, this>;
  }

  /**
   * Starts an activation and makes it the current async context for the rest of the calling function
   * (`AsyncLocalStorage.enterWith`). Dispose the handle (`using`) to end it.
   */
  protected enterActivation(): { activation: Activation; handle: ActiveGuard } {
    const activation = this.#inProcess(undefined);
    const previous = scopes().getStore();
    scopes().enterWith(activation);
    const handle: ActiveGuard = {
      get signal() {
        return activation.signal;
      },
      [Symbol.dispose]() {
        if (activation.ended) return;
        activation.end();
        if (scopes().getStore() === activation) scopes().enterWith(previous as Activation);
      },
    };
    return { activation, handle };
  }
}

/**
 * Settles with the task's result once it settles, ending the activation first; or, unless `waitForTask`, with
 * the level-2 error if that comes first (the activation then ends when the task settles). Holds the process
 * until then.
 */
function settle<R>(activation: Activation, result: PromiseLike<R>, waitForTask: boolean): Promise<R> {
  holdProcess();
  return new Promise<R>((resolve, reject) => {
    let pending = true;
    const done = (): boolean => {
      if (!pending) return false;
      pending = false;
      activation.giveUp = undefined;
      releaseProcess();
      return true;
    };
    if (!waitForTask) {
      activation.giveUp = (error) => {
        if (done()) reject(error);
      };
    }
    Promise.resolve(result).then(
      (value) => {
        activation.end();
        if (done()) resolve(value);
      },
      (error: unknown) => {
        const mapped = activation.mapRejection(error);
        activation.end();
        if (done()) reject(mapped);
      },
    );
  });
}

/**
 * Keeps tasks within a time limit, restarted by `progress()`. Create it with `timeGuard(options)`.
 * Events: `"interrupt"` at every level, `"warning"` at level 2.
 */
export class TimeGuard extends Guard<ExecutionTimeout, TimeRunContext> {
  declare readonly config: TimeConfig;
  protected readonly reason = "timeout";

  /** @param options - see `TimeGuardOptions`; validated at once */
  constructor(options?: TimeGuardOptions) {
    super(timeConfig(options));
  }

  protected context(activation: Activation): TimeRunContext {
    return new TimeContext(activation);
  }

  /** The decorator form: `f(...args)` runs `fn` under a new activation; `f.progress()`, `f.guard`. */
  wrap<A extends unknown[], R>(fn: (...args: A) => R): TimeWrapped<A, R> {
    const wrapped = this.wrapWith(fn) as unknown as TimeWrapped<A, R>;
    Object.defineProperty(wrapped, "progress", {
      value: () => {
        let scope = scopes().getStore();
        while (scope !== undefined && (scope.ended || scope.owner !== this)) scope = scope.parent;
        if (scope !== undefined) scope.progress();
        else for (const activation of this.active) activation.progress();
      },
    });
    return wrapped;
  }

  /** The context-manager form: `using active = tg.enter();` */
  enter(): ActiveTimeGuard {
    const { activation, handle } = this.enterActivation();
    return Object.assign(handle, { progress: () => activation.progress() });
  }

  /** Guards a child process, a worker or a pid; see the README's escalation matrix. */
  watch(target: WatchTarget, options?: WatchOptions): TimeWatchHandle {
    return watchTarget<ExecutionTimeout>(this, this.reason, target, options);
  }
}

/**
 * Keeps tasks within a memory limit. Create it with `memGuard(options)`.
 * Events: `"interrupt"` at every level, `"warning"` at level 2.
 */
export class MemGuard extends Guard<MemoryLimitExceeded, MemRunContext> {
  declare readonly config: MemConfig;
  protected readonly reason = "memory";

  /** @param options - see `MemGuardOptions`; validated at once */
  constructor(options: MemGuardOptions) {
    super(memConfig(options));
  }

  protected context(activation: Activation): MemRunContext {
    return new MemContext(activation);
  }

  /** The decorator form: `f(...args)` runs `fn` under a new activation; `f.guard`. */
  wrap<A extends unknown[], R>(fn: (...args: A) => R): Wrapped<A, R, MemGuard> {
    return this.wrapWith(fn);
  }

  /** The context-manager form: `using active = mg.enter();` */
  enter(): ActiveGuard {
    return this.enterActivation().handle;
  }

  /** Guards a child process, a worker or a pid; see the README's escalation matrix. */
  watch(target: WatchTarget, options?: WatchOptions): WatchHandle<MemoryLimitExceeded> {
    const handle = watchTarget<MemoryLimitExceeded>(this, this.reason, target, options);
    delete (handle as { progress?: unknown }).progress;
    return handle;
  }
}

/**
 * A TimeGuard: keeps tasks within `timeoutMs` (restarted by `progress()`), then escalates every
 * `gracePeriodMs`. Options are validated at once (`ERR_X_GUARD_INVALID_OPTION`).
 *
 * @param options - see {@link TimeGuardOptions}: `timeoutMs` (default 60 000 ms), `gracePeriodMs` (default
 *   15 000 ms), `checkIntervalMs` (default 500 ms), …
 *
 * @example
 * ```ts
 * const tg = timeGuard({ timeoutMs: 10_000 });
 * await tg.run(async ({ signal }) => fetch(url, { signal }));
 * ```
 */
export function timeGuard(options?: TimeGuardOptions): TimeGuard {
  return new TimeGuard(options);
}

/**
 * A MemGuard: keeps tasks within `maxMemoryBytes`, then escalates. Options are validated at once
 * (`ERR_X_GUARD_INVALID_OPTION`).
 *
 * @param options - see {@link MemGuardOptions}: `maxMemoryBytes` (required), `gracePeriodMs` (default 0 ms),
 *   `secondaryGracePeriodMs` (default 5 000 ms), `checkIntervalMs` (default 500 ms), …
 *
 * @example
 * ```ts
 * const mg = memGuard({ maxMemoryBytes: 512 * 1024 ** 2, metric: "tree" });
 * const { code, error } = await mg.watch(spawn("convert", args, { detached: true }));
 * ```
 */
export function memGuard(options: MemGuardOptions): MemGuard {
  return new MemGuard(options);
}
