import { Backoff, type Logger, sleep } from "@x/core";
import { durationMs, loggerOption, MAX_DURATION_MS, parseOptions, v } from "@x/core/internal";
import { SupervisorClient } from "./client.js";
import { ErrorCode, SupervisorError } from "./errors.js";
import type { Job } from "./storage.js";
import { type TlsEndpoint, tlsEndpointSchema } from "./tls-endpoint.js";

/**
 * Options of {@link runWorker}: where the supervisor is, either `socket` or `tls`, and the
 * {@link RunWorkerLoopOptions}.
 */
export type RunWorkerOptions = RunWorkerLoopOptions &
  (
    | {
        /** The supervisor's Unix socket path. */
        socket: string;
        tls?: undefined;
      }
    | {
        socket?: undefined;
        /**
         * The supervisor's TLS address, with this worker's certificate and key and the CA that signed the
         * supervisor's certificate. The files are read again at every connection, so renewed certificates are
         * picked up at the next reconnect.
         */
        tls: TlsEndpoint;
      }
  );

/** The options of {@link runWorker} other than where the supervisor is. */
export interface RunWorkerLoopOptions {
  /**
   * Runs one job and resolves to its exit code (an integer). A rejection, or any other value, reports 1.
   * `signal` aborts when the worker is stopped: settle soon after.
   */
  run: (job: Job, signal: AbortSignal) => Promise<number>;
  /** Wait after `NOJOBS` before the next `READY`, in ms. Default 60 000. */
  idleDelayMs?: number;
  /**
   * Wait after a connection error before sending the same message again, in ms. Default 5 000. Over TLS it is
   * the first of growing, jittered waits (doubling up to 12 × this, each spread by ±50 %), so that workers on
   * many machines do not all come back at the same instant when the supervisor restarts.
   */
  reconnectDelayMs?: number;
  /**
   * Longest wait for a connection (its TLS handshake included) and for each reply before it counts as a
   * connection error, in ms. Default 30 000. A link that drops every byte makes neither fail by itself.
   */
  replyTimeoutMs?: number;
  /**
   * Stops the loop: `run`'s signal aborts and the worker waits for it. When `run` still resolves to an exit
   * code, the worker reports it with `QUIT` (the job is recorded as finished, and no next job is taken) before
   * it resolves; when `run` rejects, the job stays in flight. A `DONE` not yet answered (its connection
   * failed, and the worker waits to send it again) is reported with `QUIT` too.
   */
  signal?: AbortSignal;
  /** A pino-shaped logger. Default: silent. */
  logger?: Logger;
}

const optionsSchema = v.strictObject({
  socket: v
    .string({ error: "a socket path (string)" })
    .min(1, { error: "a non-empty socket path" })
    .optional(),
  tls: tlsEndpointSchema.optional(),
  run: v.custom<RunWorkerOptions["run"]>((value) => typeof value === "function", { error: "a function" }),
  idleDelayMs: durationMs().default(60_000),
  reconnectDelayMs: durationMs().default(5_000),
  replyTimeoutMs: durationMs().default(30_000),
  signal: v.instanceof(AbortSignal, { error: "an AbortSignal" }).optional(),
  logger: loggerOption,
});

type Message = { kind: "ready" } | { kind: "done"; attrPath: string; exitCode: number };

/**
 * The worker loop of the original supervisor's workers: `READY`, run each job, `DONE <attr> <code>` (which
 * returns the next job), wait `idleDelayMs` after `NOJOBS`, and resend the same message after
 * `reconnectDelayMs` on a connection error. Resolves only when `signal` aborts.
 *
 * @param options - see {@link RunWorkerOptions}
 * @throws SupervisorError `ERR_X_SUPERVISOR_INVALID_OPTION` for a bad option; never for a connection or job failure
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { socket, tls, run, idleDelayMs, reconnectDelayMs, replyTimeoutMs, signal, logger } = parseOptions(
    optionsSchema,
    options,
    ErrorCode.INVALID_OPTION,
    SupervisorError,
  );
  if ((socket === undefined) === (tls === undefined)) {
    throw new SupervisorError(
      ErrorCode.INVALID_OPTION,
      `runWorker: give exactly one of socket and tls, got ${socket === undefined ? "neither" : "both"}`,
    );
  }
  const target = socket ?? tls!;
  const where = socket ?? `tls://${tls!.host}:${tls!.port}`;
  const reconnect =
    tls === undefined
      ? undefined
      : new Backoff({
          initialMs: reconnectDelayMs,
          factor: 2,
          maxMs: Math.min(12 * reconnectDelayMs, MAX_DURATION_MS),
          jitter: 0.5,
        });
  const jobSignal = signal ?? new AbortController().signal;
  /** After a stop: reports the job's exit code with `QUIT`, once, within `replyTimeoutMs`. */
  const reportLast = async (attrPath: string, exitCode: number) => {
    try {
      client ??= await SupervisorClient.connect(target, { signal: AbortSignal.timeout(replyTimeoutMs) });
      await settleWithin(client.quit(attrPath, exitCode), replyTimeoutMs, new AbortController().signal);
      logger.info({ attrPath, exitCode }, "reported the last job before stopping");
    } catch (error) {
      logger.warn({ err: error, attrPath, exitCode }, "could not report the last job; it stays in flight");
    }
  };
  let client: SupervisorClient | undefined;
  let message: Message = { kind: "ready" };
  /** Whether the last answer was `NOJOBS` on this connection (the wait has been logged). */
  let idle = false;
  const wait = async (ms: number) => {
    try {
      await sleep(ms, { signal: jobSignal });
      return true;
    } catch {
      return false;
    }
  };
  try {
    while (!jobSignal.aborted) {
      let job: Job | null;
      try {
        if (client === undefined) {
          client = await SupervisorClient.connect(target, {
            signal: AbortSignal.any([jobSignal, AbortSignal.timeout(replyTimeoutMs)]),
          });
          logger.info({ supervisor: where }, "connected to the supervisor");
          idle = false;
        }
        const connected = client;
        const request: Promise<Job | null> =
          message.kind === "ready" ? connected.ready() : connected.done(message.attrPath, message.exitCode);
        job = await settleWithin(request, replyTimeoutMs, jobSignal);
        message = { kind: "ready" }; // answered: nothing is left to report
        reconnect?.reset();
      } catch (error) {
        client?.destroy();
        client = undefined;
        if (jobSignal.aborted) break;
        const delayMs = Math.round(reconnect?.next() ?? reconnectDelayMs);
        logger.warn({ err: error, supervisor: where }, `supervisor unreachable; retrying in ${delayMs} ms`);
        if (!(await wait(delayMs))) break;
        continue;
      }
      if (job === null) {
        // Once per idle stretch, so that an idle worker shows it is connected and waiting.
        if (!idle) logger.info({ idleDelayMs }, "no job yet; asking again every idle delay");
        idle = true;
        if (!(await wait(idleDelayMs))) break;
        continue;
      }
      idle = false;
      const exitCode = await runJob(run, job, jobSignal, logger);
      if (jobSignal.aborted) {
        if (exitCode !== undefined) await reportLast(job.attrPath, exitCode);
        break;
      }
      message = { kind: "done", attrPath: job.attrPath, exitCode: exitCode ?? 1 };
    }
    // Stopped before a DONE got its reply (its link failed, and the worker was waiting to send it again).
    if (message.kind === "done") await reportLast(message.attrPath, message.exitCode);
  } finally {
    client?.destroy();
  }
}

/** Runs one job: its exit code, or `undefined` when `run` rejected or resolved to something else (logged). */
async function runJob(
  run: RunWorkerOptions["run"],
  job: Job,
  signal: AbortSignal,
  logger: Logger,
): Promise<number | undefined> {
  const reporting = () => (signal.aborted ? "not reporting it (stopping)" : "reporting 1");
  try {
    const code = await run(job, signal);
    if (Number.isSafeInteger(code)) return code;
    logger.error(
      { attrPath: job.attrPath, result: String(code) },
      `job did not resolve to an integer; ${reporting()}`,
    );
  } catch (error) {
    logger.error({ err: error, attrPath: job.attrPath }, `job failed; ${reporting()}`);
  }
  return undefined;
}

/** `promise`, or a rejection when `ms` pass or `signal` aborts first. */
function settleWithin<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => finish(() => reject(signal.reason));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`no reply from supervisor within ${ms} ms`))),
      ms,
    );
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      settle();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error)),
    );
  });
}
