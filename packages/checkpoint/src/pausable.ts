import { optionError } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "./errors.js";

/**
 * An async iterator over a source that can be paused: while paused it never pulls from the source. It is its
 * own async iterable, so `for await (const item of stream)` works, and `break` closes the source.
 */
export interface PausableStream<T> extends AsyncIterator<T, unknown, undefined> {
  /** The next item, pulled from the source once not paused; `{ done: true }` once the stream has ended. */
  next(): Promise<IteratorResult<T, undefined>>;
  /** Ends the stream, calls the source iterator's `return(value)` when it has one, and resolves `{ done: true, value }`. */
  return(value?: unknown): Promise<IteratorResult<T, unknown>>;
  /** Forwards to the source iterator's `throw(error)`; without one, ends the stream and rejects with `error`. */
  throw(error?: unknown): Promise<IteratorResult<T, unknown>>;
  /** The stream itself. */
  [Symbol.asyncIterator](): PausableStream<T>;
  /** Stops pulling from the source; a pull in flight completes and its outcome is held until {@link PausableStream.resume}. Idempotent. */
  pause(): void;
  /** Delivers a held outcome, then serves the waiting `next()` calls in call order. Idempotent. */
  resume(): void;
  /** Whether the stream is paused; false at first. */
  readonly paused: boolean;
  /** The async iterable given to {@link pausable}. */
  readonly source: AsyncIterable<T>;
}

type Outcome<T> = { ok: true; result: IteratorResult<T, unknown> } | { ok: false; error: unknown };

interface Waiter<T> {
  resolve(result: IteratorResult<T, undefined>): void;
  reject(error: unknown): void;
}

const DONE: IteratorResult<never, undefined> = Object.freeze({ done: true, value: undefined });

/**
 * Wraps an async iterable so that it can be paused and resumed: the dependent of a `Checkpoint`.
 *
 * - While paused it starts no pull; a pull in flight completes and its outcome is held until resume.
 * - Pulls are strictly sequential, one per `next()` call, in call order.
 * - `return()` and `throw()` reach the source (a generator's `finally` blocks run), even while paused.
 *
 * @param source - any async iterable; its iterator is created at the first pull
 * @returns the stream, which is its own async iterator
 * @throws `ERR_X_CHECKPOINT_INVALID_OPTION` when `source` is not an async iterable
 *
 * @example
 * ```ts
 * const orders = pausable(readOrders());
 * const cp = new Checkpoint("orders", { dependent: orders, dependencies: [new Dependency("prices")] });
 * for await (const order of orders) await cp.checkPulse(order.time, { offset: order.offset });
 * ```
 */
export function pausable<T>(source: AsyncIterable<T>): PausableStream<T> {
  if (!isAsyncIterable(source)) {
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "source",
      source,
      "an async iterable: an object with a [Symbol.asyncIterator]() method",
      CheckpointError,
    );
  }
  return new Pausable(source);
}

class Pausable<T> implements PausableStream<T> {
  readonly source: AsyncIterable<T>;
  #iterator: AsyncIterator<T> | undefined;
  #paused = false;
  /** No pull will start again: the source reported done, or the stream was closed. */
  #finished = false;
  /** `return()` or an ending `throw()` was called: nothing is held any more, even while paused. */
  #closed = false;
  #pulling = false;
  #held: { waiter: Waiter<T>; outcome: Outcome<T> } | undefined;
  readonly #waiters: Waiter<T>[] = [];

  constructor(source: AsyncIterable<T>) {
    this.source = source;
  }

  get paused(): boolean {
    return this.#paused;
  }

  [Symbol.asyncIterator](): PausableStream<T> {
    return this;
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#releaseHeld();
    this.#pump();
  }

  next(): Promise<IteratorResult<T, undefined>> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#pump();
    });
  }

  async return(value?: unknown): Promise<IteratorResult<T, unknown>> {
    const iterator = this.#close();
    if (iterator && typeof iterator.return === "function") await iterator.return(value);
    return { done: true, value };
  }

  async throw(error?: unknown): Promise<IteratorResult<T, unknown>> {
    const iterator = this.#closed ? undefined : this.#iterator;
    if (!iterator || typeof iterator.throw !== "function") {
      await this.return();
      throw error;
    }
    let result: IteratorResult<T, unknown>;
    try {
      result = await iterator.throw(error);
    } catch (failure) {
      this.#close();
      throw failure;
    }
    if (result.done !== false) this.#close();
    return result;
  }

  /** Ends the stream; returns the source iterator when this call is the one that closed it. */
  #close(): AsyncIterator<T> | undefined {
    if (this.#closed) return undefined;
    this.#closed = true;
    this.#finished = true;
    this.#releaseHeld();
    this.#pump();
    return this.#iterator;
  }

  /** Starts the next pull, or ends the waiting calls, whenever the state allows it. */
  #pump(): void {
    if (this.#held) return;
    if (this.#finished) {
      for (let waiter = this.#waiters.shift(); waiter; waiter = this.#waiters.shift()) waiter.resolve(DONE);
      return;
    }
    if (this.#paused || this.#pulling) return;
    const waiter = this.#waiters.shift();
    if (!waiter) return;
    this.#pulling = true;
    let pull: Promise<IteratorResult<T, unknown>>;
    try {
      this.#iterator ??= this.source[Symbol.asyncIterator]();
      pull = Promise.resolve(this.#iterator.next());
    } catch (error) {
      pull = Promise.reject(error);
    }
    pull.then(
      (result) => this.#settle(waiter, { ok: true, result }),
      (error: unknown) => this.#settle(waiter, { ok: false, error }),
    );
  }

  #settle(waiter: Waiter<T>, outcome: Outcome<T>): void {
    this.#pulling = false;
    if (outcome.ok && outcome.result.done) this.#finished = true;
    if (this.#paused && !this.#closed) {
      this.#held = { waiter, outcome };
      return;
    }
    deliver(waiter, outcome);
    this.#pump();
  }

  #releaseHeld(): void {
    const held = this.#held;
    if (!held) return;
    this.#held = undefined;
    deliver(held.waiter, held.outcome);
  }
}

function deliver<T>(waiter: Waiter<T>, outcome: Outcome<T>): void {
  if (!outcome.ok) waiter.reject(outcome.error);
  else if (outcome.result.done) waiter.resolve(DONE);
  else waiter.resolve(outcome.result as IteratorResult<T, undefined>);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    ((typeof value === "object" && value !== null) || typeof value === "function") &&
    typeof (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === "function"
  );
}
