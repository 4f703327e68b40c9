import { types } from "node:util";
import { describeValue } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "./errors.js";

/** Whether `value` is a `Date` (from any realm) holding a valid time. */
export function isValidDate(value: unknown): value is Date {
  return types.isDate(value) && !Number.isNaN(Date.prototype.getTime.call(value));
}

/** The time of a value that {@link isValidDate} accepted, in ms since the epoch. */
export function timeOf(date: Date): number {
  return Date.prototype.getTime.call(date);
}

/**
 * Whether `value` is "no marker yet": only `undefined` and `null` are, unlike Slipstream, where any falsy value
 * was.
 */
export function isMissing(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** `ERR_X_CHECKPOINT_MARKER_TYPE` for a marker that is null or undefined. */
export function missingMarkerError(marker: unknown): CheckpointError {
  return new CheckpointError(
    ErrorCode.MARKER_TYPE,
    `invalid marker: ${String(marker)} (expected a value that is neither null nor undefined)`,
  );
}

/** `ERR_X_CHECKPOINT_MARKER_TYPE` for a marker that a default check would have to compare. */
export function dateMarkerError(marker: unknown, dependencyName: string): CheckpointError {
  return new CheckpointError(
    ErrorCode.MARKER_TYPE,
    `invalid marker: ${describeMarker(marker)} (expected a valid Date, because dependency ` +
      `${JSON.stringify(dependencyName)} uses a default check; pass Date markers or give it a custom check)`,
  );
}

/** `ERR_X_CHECKPOINT_MARKER_TYPE` thrown by a default check that finds a marker that is not a valid Date. */
export function defaultCheckError(
  check: string,
  stateMarker: unknown,
  checkpointMarker: unknown,
): CheckpointError {
  return new CheckpointError(
    ErrorCode.MARKER_TYPE,
    `the default ${check} check compares Date markers, got state marker ${describeMarker(stateMarker)} ` +
      `and checkpoint marker ${describeMarker(checkpointMarker)}; pass Date markers in heartbeat and ` +
      "checkPulse, or give the dependency a custom check",
  );
}

function describeMarker(marker: unknown): string {
  if (types.isDate(marker)) return isValidDate(marker) ? marker.toISOString() : "Invalid Date";
  if (typeof marker === "bigint") return `${marker}n`;
  return describeValue(marker);
}
