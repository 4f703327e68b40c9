import { deserialize, serialize } from "node:v8";
import { CheckpointError, ErrorCode } from "./errors.js";

/**
 * The bytes a persistent cache stores for `value`: its `node:v8` serialisation, so that `Date`, `bigint`,
 * `Map`, `Set` and typed arrays round-trip.
 *
 * @param key - the cache key, named in the error
 * @throws `ERR_X_CHECKPOINT_CACHE_VALUE` for a value that cannot be serialised
 */
export function serializeValue(key: string, value: unknown): Buffer {
  try {
    return serialize(value);
  } catch (cause) {
    throw new CheckpointError(
      ErrorCode.CACHE_VALUE,
      `cannot store the value of key ${JSON.stringify(key)}: it cannot be serialised ` +
        "(functions, symbols and objects holding them cannot be stored)",
      { cause },
    );
  }
}

/**
 * The value that {@link serializeValue} stored as `bytes`.
 *
 * @param key - the cache key, named in the error
 * @throws `ERR_X_CHECKPOINT_CORRUPT` when the bytes cannot be deserialised
 */
export function deserializeValue(key: string, bytes: Buffer): unknown {
  try {
    return deserialize(bytes);
  } catch (cause) {
    throw corruptValue(key, cause);
  }
}

/** `ERR_X_CHECKPOINT_CORRUPT` for a stored value of `key` that this package cannot read. */
export function corruptValue(key: string, cause: unknown): CheckpointError {
  return new CheckpointError(
    ErrorCode.CORRUPT,
    `cannot read key ${JSON.stringify(key)} from the cache: its value is corrupted or was written by ` +
      "something else than @x/checkpoint",
    { cause },
  );
}
