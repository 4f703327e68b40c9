import { progress } from "./context.js";

/** Anything with a `progress()` method: a run context, an `enter()` handle, a wrapped function, a watch handle. */
export interface ProgressTarget {
  progress(): void;
}

function reporter(target: ProgressTarget | undefined): () => void {
  return target === undefined ? progress : () => target.progress();
}

function* syncLoop<T>(iterable: Iterable<T>, report: () => void): Generator<T, void, undefined> {
  for (const item of iterable) {
    yield item;
    report();
  }
}

async function* asyncLoop<T>(
  iterable: AsyncIterable<T>,
  report: () => void,
): AsyncGenerator<T, void, undefined> {
  for await (const item of iterable) {
    yield item;
    report();
  }
}

/**
 * Yields every item of `iterable` and reports progress each time the next item is requested (after the loop
 * body ran for the previous one), including the request that finds the source exhausted: `n` items, `n`
 * reports. Without `target`, reports go to `progress()` (the innermost TimeGuard of the context). Leaving the
 * loop early closes the source.
 *
 * @example
 * ```ts
 * await tg.run(async () => { for (const url of progressLoop(urls)) await fetchOne(url); });
 * ```
 */
export function progressLoop<T>(
  iterable: AsyncIterable<T>,
  target?: ProgressTarget,
): AsyncGenerator<T, void, undefined>;
export function progressLoop<T>(
  iterable: Iterable<T>,
  target?: ProgressTarget,
): Generator<T, void, undefined>;
export function progressLoop<T>(
  iterable: Iterable<T> | AsyncIterable<T>,
  target?: ProgressTarget,
): Generator<T, void, undefined> | AsyncGenerator<T, void, undefined> {
  const report = reporter(target);
  if (iterable !== null && typeof (iterable as AsyncIterable<T>)[Symbol.asyncIterator] === "function") {
    return asyncLoop(iterable as AsyncIterable<T>, report);
  }
  return syncLoop(iterable as Iterable<T>, report);
}
