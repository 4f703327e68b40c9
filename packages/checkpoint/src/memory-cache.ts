import { MemoryCache as CoreMemoryCache } from "@x/core";
import { CheckpointError, ErrorCode } from "./errors.js";

/**
 * `@x/core`'s in-memory {@link CoreMemoryCache | MemoryCache}, with `@x/checkpoint`'s error code: a value
 * that cannot be structured-cloned makes `set` throw `ERR_X_CHECKPOINT_CACHE_VALUE` (instead of core's
 * `ERR_X_CACHE_VALUE`) and stores nothing. Everything else is core's: a clone is stored on `set` and a fresh
 * clone returned by every `get`.
 */
export class MemoryCache<V = unknown> extends CoreMemoryCache<V> {
  protected override invalidValue(key: string, cause: unknown): Error {
    return new CheckpointError(
      ErrorCode.CACHE_VALUE,
      `cannot store the value of key ${JSON.stringify(key)}: it cannot be structured-cloned ` +
        "(functions, symbols and objects holding them cannot be stored)",
      { cause },
    );
  }
}
