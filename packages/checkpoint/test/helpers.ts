import { XError } from "@x/core";
import { expect } from "vitest";
import { MemoryCache } from "../src/index.js";

/** 2025-01-01 10:00 UTC plus `minutes`. */
export function at(minutes: number): Date {
  return new Date(Date.UTC(2025, 0, 1, 10, 0) + minutes * 60_000);
}

/** Asserts that `action` throws (or rejects with) an `XError` with `code`, and returns it. */
export async function expectCode(action: () => unknown, code: string): Promise<XError> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${code}`).toBeDefined();
  if (!XError.is(caught, code)) throw caught;
  return caught;
}

/** A dependent that records its `pause()`/`resume()` calls in `log`. */
export function recordingDependent(log: string[] = []) {
  return {
    log,
    pause: () => {
      log.push("pause");
    },
    resume: () => {
      log.push("resume");
    },
  };
}

/** A `MemoryCache` that records every `set` key in `writes` and fails on `has`/`delete`. */
export class RecordingCache extends MemoryCache {
  readonly writes: string[] = [];
  readonly reads: string[] = [];

  override get(key: string): unknown {
    this.reads.push(key);
    return super.get(key);
  }

  override set(key: string, value: unknown): void {
    super.set(key, value);
    this.writes.push(key);
  }

  override has(): boolean {
    throw new Error("the checkpoint must never call has()");
  }

  override delete(): boolean {
    throw new Error("the checkpoint must never call delete()");
  }

  /** Every stored key and value, as a plain object. */
  dump(): Record<string, unknown> {
    const keys = [...new Set(this.writes)];
    return Object.fromEntries(keys.map((key) => [key, super.get(key)]));
  }
}

/** An asynchronous cache over a `MemoryCache`: every method answers on a later macrotask. */
export class AsyncCache {
  readonly inner = new MemoryCache();
  readonly log: string[] = [];

  async get(key: string): Promise<unknown> {
    await new Promise((resolve) => setImmediate(resolve));
    return this.inner.get(key);
  }

  async set(key: string, value: unknown): Promise<void> {
    this.log.push(`set ${key}`);
    await new Promise((resolve) => setImmediate(resolve));
    this.inner.set(key, value);
    this.log.push(`stored ${key}`);
  }

  async has(key: string): Promise<boolean> {
    return this.inner.has(key);
  }

  async delete(key: string): Promise<boolean> {
    return this.inner.delete(key);
  }
}

/** A promise with its resolve/reject functions. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
