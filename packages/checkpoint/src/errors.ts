import { XError } from "@x/core";

/**
 * Every code that `@x/checkpoint` throws. The README's Errors table says when each one happens.
 */
export type CheckpointErrorCode =
  | "ERR_X_CHECKPOINT_INVALID_OPTION"
  | "ERR_X_CHECKPOINT_DUPLICATE_DEPENDENCY"
  | "ERR_X_CHECKPOINT_UNKNOWN_DEPENDENCY"
  | "ERR_X_CHECKPOINT_DEPENDENCY_REQUIRED"
  | "ERR_X_CHECKPOINT_MARKER_TYPE"
  | "ERR_X_CHECKPOINT_STATE_TYPE"
  | "ERR_X_CHECKPOINT_ASYNC_CACHE"
  | "ERR_X_CHECKPOINT_CORRUPT"
  | "ERR_X_CHECKPOINT_CACHE_VALUE"
  | "ERR_X_CHECKPOINT_CACHE_CLOSED"
  | "ERR_X_CHECKPOINT_CACHE_OPEN"
  | "ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE"
  | "ERR_X_CHECKPOINT_SQLITE_VERSION";

/**
 * The error class of `@x/checkpoint`: an {@link XError} whose `code` is one of {@link CheckpointErrorCode}.
 * Test errors with `XError.is(error, "ERR_X_CHECKPOINT_…")`, which also works across duplicate installs.
 */
export class CheckpointError extends XError {}
