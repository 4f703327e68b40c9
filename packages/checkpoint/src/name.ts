import { parseOptions, v } from "@x/core/internal";
import { CheckpointError, ErrorCode } from "./errors.js";

const nameSchema = v.strictObject({
  name: v.string({ error: "a non-empty string" }).min(1, { error: "a non-empty string" }),
});

/**
 * Validates the name of a `Dependency` or a `Checkpoint`: a non-empty string, because it is part of the
 * cache keys. Throws `ERR_X_CHECKPOINT_INVALID_OPTION` naming the value otherwise.
 */
export function parseName(name: unknown): string {
  return parseOptions(nameSchema, { name }, ErrorCode.INVALID_OPTION, CheckpointError).name;
}
