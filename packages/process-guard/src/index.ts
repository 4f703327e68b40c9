export { currentSignal, progress } from "./context.js";
export {
  ErrorCode,
  ExecutionTimeout,
  type ExecutionTimeoutInfo,
  GuardError,
  MemoryLimitExceeded,
  type MemoryLimitExceededInfo,
  type MemoryMetric,
} from "./errors.js";
export {
  type ForwardedSignal,
  type ForwardSignalsOptions,
  forwardedSignals,
  forwardSignals,
  type SignalForwarding,
} from "./forward-signals.js";
export {
  type ActiveGuard,
  type ActiveTimeGuard,
  type GuardEvents,
  type InterruptEvent,
  type MemGuard,
  type MemRunContext,
  memGuard,
  type RunOptions,
  type TimeGuard,
  type TimeRunContext,
  type TimeWrapped,
  timeGuard,
  type WarningEvent,
  type Wrapped,
} from "./guard.js";
export {
  type GuardedCommand,
  type GuardedCommandOptions,
  type GuardedCommandResult,
  GuardedExitCode,
  type GuardedInterruptEvent,
  type GuardedLimit,
  runGuardedCommand,
} from "./guarded-command.js";
export { interruptOf, isInterrupt } from "./interrupt.js";
export {
  type CommonGuardOptions,
  InterruptType,
  type MemGuardOptions,
  type RunSyncOptions,
  type TimeGuardOptions,
} from "./options.js";
export { type ProgressTarget, progressLoop } from "./progress-loop.js";
export { runSync } from "./run-sync.js";
export type { InterruptMessage, InterruptReason, Level } from "./targets.js";
export type {
  TimeWatchHandle,
  WatchHandle,
  WatchOptions,
  WatchResult,
  WatchTarget,
} from "./watch-target.js";
