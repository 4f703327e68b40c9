/**
 * `@x/core/internal`: the plumbing the `@x` packages share (option validation, command-line helpers, a status
 * line, optional peers, worker threads, a read-only HTTP listener). It follows semver like the rest of `@x/core`, but it is shaped for
 * the toolkit's own packages, not for applications.
 */
export { amqpRefusal } from "./amqp-refusal.js";
export { brokerUrls, redactUrls, splitUrls, urlAt, urlList } from "./broker-urls.js";
export {
  type CliProgram,
  type CliStreams,
  cliProgram,
  infoFlagOptions,
  infoFlagsHelp,
} from "./cli-program.js";
export {
  ExitCode,
  exitQuietlyOnBrokenPipe,
  ignoreBrokenPipe,
  onShutdownSignals,
  parseCommandLine,
  type ShutdownOptions,
  STOP_REQUEST_WINDOW_MS,
  signalExitCode,
  UsageError,
} from "./command-line.js";
export { type DurationBounds, durationMs } from "./duration-option.js";
export { errorReasons } from "./error-reasons.js";
export {
  causeCodes,
  exitCodeFor,
  type FailureKind,
  type RetryUnavailableOptions,
  reportFailure,
  retryWhileUnavailable,
  systemFailureKind,
  UNAVAILABLE_GRACE_MS,
} from "./failure-kind.js";
export { type HostPort, parseHostPort, parseListenAddress } from "./host-port.js";
export {
  asksForJsonLogs,
  createCommandLogger,
  type LogFlags,
  logFlagOptions,
  logFlagsHelp,
  readLogFlags,
} from "./log-flags.js";
export { isLogger, loggerOption } from "./logger-option.js";
export { type OptionalPeer, type OptionalPeerErrors, requireOptionalPeer } from "./optional-peer.js";
export {
  describeValue,
  optionError,
  parseOptions,
  unknownOptionError,
  type XErrorClass,
} from "./options.js";
export {
  type AtomicContent,
  type AtomicWriteOptions,
  type CacheDirectoryOptions,
  checkPrivateDirectory,
  chooseCacheDirectory,
  createFileExclusive,
  enableCompileCacheSafely,
  type PrivateDirectoryCheck,
  writeFileAtomic,
} from "./private-files.js";
export {
  type HttpAnswer,
  type HttpRoutes,
  type ReadOnlyHttpAddress,
  ReadOnlyHttpServer,
  textAnswer,
} from "./read-only-http.js";
export { inspectAs, inspectCustom, redactedMark, redactUrl } from "./redact.js";
export * as v from "./schema/v.js";
export { allowedHostsSchema, parseHostName } from "./served-hosts.js";
export { type CreatedPaths, trackCreatedPaths } from "./start-leftovers.js";
export { createStatusLine, type StatusLine, type StatusLineOptions } from "./status-line.js";
export { onStdioError, writeStdout } from "./stdio.js";
export { MAX_DURATION_MS, parseDurationMs, parseSizeBytes } from "./units.js";
export { startWorker } from "./worker-thread.js";
