export { Backoff, type BackoffOptions, backoffDelay } from "./backoff.js";
export { type Cache, type MaybePromise, MemoryCache, type SyncCache } from "./cache.js";
export {
  type ConsoleLoggerOptions,
  createConsoleLogger,
  type LogFn,
  type Logger,
  type LogLevel,
  logLevels,
  silentLogger,
} from "./logger.js";
export { type SleepOptions, sleep } from "./sleep.js";
export { XError, type XErrorOptions } from "./x-error.js";
