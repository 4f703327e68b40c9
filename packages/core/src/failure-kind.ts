import { ExitCode } from "./command-line.js";
import type { Logger } from "./logger.js";
import { sleep } from "./sleep.js";

/**
 * Why a command could not start or run, in the words of the root README's table of exit statuses; every `@x`
 * command maps its failures to one of these, and {@link exitCodeFor} gives the status:
 * - `in-use`: a port, a socket or a database another process holds (78);
 * - `unusable`: an option value that cannot be used: a file, a group, a storage, a TLS certificate (78);
 * - `refused`: a dependency answered and refused the login, the database or the virtual host (78);
 * - `unavailable`: a dependency does not answer (RabbitMQ, PostgreSQL, a catalog), after the same short retry
 *   ({@link UNAVAILABLE_GRACE_MS}) whichever it is (69);
 * - `failure`: the work itself failed (1).
 */
export type FailureKind = "in-use" | "unusable" | "refused" | "unavailable" | "failure";

const exitCodes: Record<FailureKind, number> = {
  "in-use": ExitCode.CONFIG,
  unusable: ExitCode.CONFIG,
  refused: ExitCode.CONFIG,
  unavailable: ExitCode.UNAVAILABLE,
  failure: ExitCode.FAILURE,
};

/** The exit status of a kind of failure, the same in every `@x` command (see {@link FailureKind}). */
export function exitCodeFor(kind: FailureKind): number {
  return exitCodes[kind];
}

/**
 * How long a dependency that does not answer (connection refused, unknown host) is tried again before a command
 * gives up with `unavailable` (69), in ms: room for a server that is restarting, short enough that a wrong
 * address fails within a few seconds.
 */
export const UNAVAILABLE_GRACE_MS = 3_000;

/** System error codes of an address where nothing answers. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_NONAME",
  "EAI_FAIL",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** System error codes of an address or a file that cannot be used as given. */
const UNUSABLE_CODES = new Set(["EACCES", "EPERM", "EADDRNOTAVAIL", "ENOENT", "ENOTDIR", "EROFS"]);

/**
 * The kind of a system error found on `error` or along its `cause` chain (`EADDRINUSE`: `in-use`;
 * `ECONNREFUSED`, `ENOTFOUND`: `unavailable`; `EACCES`, `EADDRNOTAVAIL`: `unusable`), or `undefined`.
 */
export function systemFailureKind(error: unknown): FailureKind | undefined {
  for (const code of causeCodes(error)) {
    if (code === "EADDRINUSE") return "in-use";
    if (UNAVAILABLE_CODES.has(code)) return "unavailable";
    if (UNUSABLE_CODES.has(code)) return "unusable";
  }
  return undefined;
}

/**
 * The string `code`s of `error` and of its `cause`s, outermost first (a chain that loops is followed once).
 *
 * @param error - anything thrown
 */
export function* causeCodes(error: unknown): Generator<string> {
  const seen = new Set<unknown>();
  for (let e = error; e !== null && typeof e === "object" && !seen.has(e); e = (e as Error).cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") yield code;
  }
}

/**
 * Logs why a command failed as one line, `<what>: <the error's message>`, with the error's code (if any) and
 * the failure's `kind` as fields (one JSON object under `--log-json`), and returns the exit status of `kind`.
 *
 * @param logger - the command's logger
 * @param what - what failed (`"cannot start"`)
 * @param error - why
 * @param kind - its kind, which decides the status
 */
export function reportFailure(logger: Logger, what: string, error: unknown, kind: FailureKind): number {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null | undefined)?.code;
  logger.error({ ...(typeof code === "string" ? { code } : {}), kind }, `${what}: ${message}`);
  return exitCodeFor(kind);
}

/** Options of {@link retryWhileUnavailable}. */
export interface RetryUnavailableOptions {
  /** Whether an error means the dependency does not answer. Default: {@link systemFailureKind} says so. */
  isUnavailable?: (error: unknown) => boolean;
  /** How long to keep trying, in ms. Default {@link UNAVAILABLE_GRACE_MS}. */
  graceMs?: number;
  /** The wait between attempts, in ms. Default 250. */
  delayMs?: number;
  /** Called before each new attempt with the error of the last one. */
  onRetry?: (error: unknown, attempt: number) => void;
  /** Aborting it ends the waits: the last error is thrown. */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` again while it fails because a dependency does not answer, for `graceMs` at most: the
 * short retry every `@x` command gives RabbitMQ, PostgreSQL and a catalog alike before it exits 69. Any other
 * error, or the last unavailable one, is thrown as it is.
 *
 * @param attempt - connects, opens, or asks
 * @param options - see {@link RetryUnavailableOptions}
 */
export async function retryWhileUnavailable<T>(
  attempt: () => Promise<T>,
  options: RetryUnavailableOptions = {},
): Promise<T> {
  const {
    isUnavailable = (error) => systemFailureKind(error) === "unavailable",
    graceMs = UNAVAILABLE_GRACE_MS,
    delayMs = 250,
    onRetry,
    signal,
  } = options;
  const deadline = Date.now() + graceMs;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isUnavailable(error) || Date.now() + delayMs > deadline || signal?.aborted) throw error;
      onRetry?.(error, n);
      await sleep(delayMs, signal ? { signal } : {}).catch(() => {});
    }
  }
}
