import type { AsyncLocalStorage } from "node:async_hooks";
import { ErrorCode, GuardError } from "./errors.js";

/**
 * What the guards keep in their `AsyncLocalStorage`: the innermost activation of the current async context,
 * linked to the one that enclosed it when it started.
 */
export interface Scope {
  /** The enclosing scope when this one started (it may have ended since). */
  readonly parent: Scope | undefined;
  /** Ended scopes are invisible to `progress()`, `currentSignal()` and nesting links. */
  readonly ended: boolean;
  /** A TimeGuard activation or a `runSync` call: `progress()` restarts it. */
  readonly restartable: boolean;
  /** Whether it has an `AbortSignal` (every activation; a `runSync` call has none). */
  readonly hasSignal: boolean;
  /** The activation's `AbortSignal` (created on first access). */
  readonly signal: AbortSignal | undefined;
  /** The guard that started it (`undefined` for `runSync`), for `f.progress()`. */
  readonly owner: object | undefined;
  /** Restarts the time limit (a no-op for a MemGuard activation). */
  progress(): void;
}

let storage: AsyncLocalStorage<Scope> | undefined;

/**
 * The one chain of guard contexts of the process, made on first use: guarding a child process or a worker
 * needs none, and making one loads Node's async-context modules.
 */
export function scopes(): AsyncLocalStorage<Scope> {
  if (storage === undefined) {
    const { AsyncLocalStorage } = process.getBuiltinModule("node:async_hooks");
    storage = new AsyncLocalStorage<Scope>();
  }
  return storage;
}

/** The innermost scope of the current async context that has not ended, and matches `test`. */
export function innermost(test?: (scope: Scope) => boolean): Scope | undefined {
  let scope = scopes().getStore();
  while (scope !== undefined && (scope.ended || (test !== undefined && !test(scope)))) scope = scope.parent;
  return scope;
}

/** The innermost active scope of the current async context that is not ended: the parent of a new one. */
export function enclosing(): Scope | undefined {
  let scope = scopes().getStore();
  while (scope?.ended) scope = scope.parent;
  return scope;
}

function noContext(what: string): GuardError {
  return new GuardError(
    ErrorCode.NO_CONTEXT,
    `${what} was called outside any active ${what === "progress()" ? "time guard" : "guard"}: call it inside tg.run(), a wrapped function, an enter() block or runSync()`,
  );
}

/**
 * Restarts the time limit of the innermost active TimeGuard activation (or `runSync` call) of the current
 * async context. MemGuard activations and ended ones are skipped; outer TimeGuards keep running.
 *
 * @throws GuardError `ERR_X_GUARD_NO_CONTEXT` outside any active TimeGuard
 */
export function progress(): void {
  let scope = scopes().getStore();
  while (scope !== undefined && (scope.ended || !scope.restartable)) scope = scope.parent;
  if (scope === undefined) throw noContext("progress()");
  scope.progress();
}

/**
 * The `AbortSignal` of the innermost active guard activation of the current async context: how a wrapped
 * function reaches its signal.
 *
 * @throws GuardError `ERR_X_GUARD_NO_CONTEXT` outside any active guard
 */
export function currentSignal(): AbortSignal {
  let scope = scopes().getStore();
  while (scope !== undefined && (scope.ended || !scope.hasSignal)) scope = scope.parent;
  if (scope === undefined) throw noContext("currentSignal()");
  return scope.signal!;
}
