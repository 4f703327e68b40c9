export { Backoff, type BackoffOptions, backoffDelay } from "./backoff.js";
export { type Cache, type MaybePromise, MemoryCache, type SyncCache } from "./cache.js";
export {
  ExitCode,
  onShutdownSignals,
  parseCommandLine,
  type ShutdownOptions,
  signalExitCode,
  UsageError,
} from "./command-line.js";
export {
  type ConsoleLoggerOptions,
  createConsoleLogger,
  type LogFn,
  type Logger,
  type LogLevel,
  logLevels,
  silentLogger,
} from "./logger.js";
export { type OptionalPeer, type OptionalPeerErrors, requireOptionalPeer } from "./optional-peer.js";
export {
  describeValue,
  isLogger,
  loggerOption,
  optionError,
  parseOptions,
  type XErrorClass,
} from "./options.js";
export { type SleepOptions, sleep } from "./sleep.js";
export { createStatusLine, type StatusLine, type StatusLineOptions } from "./status-line.js";
export { parseDurationMs, parseSizeBytes } from "./units.js";
export { XError, type XErrorOptions } from "./x-error.js";
