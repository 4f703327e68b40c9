import { describeValue } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "./errors.js";
import { isPlainObject } from "./snapshot.js";

/**
 * Checks a `checkPulse` state: a plain object (prototype `Object.prototype` or `null`) with no top-level
 * function or symbol value.
 *
 * @throws `ERR_X_CHECKPOINT_STATE_TYPE`
 */
export function validateState(state: unknown): asserts state is Record<string, unknown> {
  if (!isPlainObject(state)) {
    throw new CheckpointError(
      ErrorCode.STATE_TYPE,
      `invalid state: ${describeValue(state)} (expected a plain object of structured-cloneable values)`,
    );
  }
  for (const key in state) {
    const value = state[key];
    if (typeof value === "function" || typeof value === "symbol") {
      throw new CheckpointError(
        ErrorCode.STATE_TYPE,
        `invalid state: key ${JSON.stringify(key)} holds ${describeValue(value)} (expected a structured-cloneable value)`,
      );
    }
  }
}

/**
 * A structured clone of the dependent state (Slipstream kept the live state instead), taken with a shallow copy
 * when every value is a primitive, which is the same thing and much cheaper.
 *
 * @throws `ERR_X_CHECKPOINT_STATE_TYPE` when a nested value cannot be cloned
 */
export function snapshotState(state: Record<string, unknown>): Record<string, unknown> {
  for (const key in state) {
    const value = state[key];
    if (typeof value === "object" && value !== null) return deepClone(state);
  }
  return { ...state };
}

function deepClone(state: Record<string, unknown>): Record<string, unknown> {
  try {
    return structuredClone(state);
  } catch (cause) {
    throw new CheckpointError(
      ErrorCode.STATE_TYPE,
      "the dependent state holds a value that cannot be structured-cloned, so no checkpoint can be taken of it",
      { cause },
    );
  }
}
