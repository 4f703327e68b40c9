export { Checkpoint, type CheckpointEvents, type HeartbeatResult } from "./checkpoint.js";
export type { CheckpointCallback, CheckpointOptions } from "./checkpoint-options.js";
export { Dependency, type DependencyCheck, type DependencyOptions } from "./dependency.js";
export { CheckpointError, ErrorCode } from "./errors.js";
export { MemoryCache } from "./memory-cache.js";
export { type PausableStream, pausable } from "./pausable.js";
export type { CheckpointCache } from "./snapshot.js";
export { SqliteCache } from "./sqlite-cache.js";
