import { onShutdownSignals, v } from "@x/core/internal";
import type { GuardedCommand } from "./guarded-command.js";
import { parse } from "./options.js";

/**
 * The signals {@link forwardSignals} passes on to a guarded command's process group, as `timeout(1)` passes on
 * HUP, INT, QUIT and TERM (and ALRM, which it reads as its own time limit): each would otherwise end the guard
 * (SIGUSR1 would start Node's inspector) and leave the command running without its limits.
 */
export const forwardedSignals = Object.freeze([
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGTERM",
  "SIGUSR1",
  "SIGUSR2",
  "SIGALRM",
] as const);

/** One of {@link forwardedSignals}. */
export type ForwardedSignal = (typeof forwardedSignals)[number];

/** Options of {@link forwardSignals}. */
export interface ForwardSignalsOptions {
  /** The signals to forward. Default: all of {@link forwardedSignals}. */
  signals?: readonly ForwardedSignal[];
}

/** Stops forwarding (also when the command has ended): removes the listeners; idempotent. */
export type SignalForwarding = (() => void) & Disposable;

const shutdownSignals: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

const expected = `an array of ${forwardedSignals.join(", ")}`;
const signalList = v.array(v.enum(forwardedSignals, { error: expected }), { error: expected });
const schema = v.strictObject({ signals: signalList.optional() });

/** The schema of `runGuardedCommand()`'s `forwardSignals` option: `true`, `false` or a list of signals. */
export const forwardSignalsOption = v.union([v.boolean(), signalList], {
  error: `true, false or ${expected}`,
});

const commandSchema = v.custom<GuardedCommand>(
  (value) =>
    typeof (value as GuardedCommand | null)?.kill === "function" &&
    typeof (value as GuardedCommand).then === "function",
  { error: "a GuardedCommand (what runGuardedCommand returns)" },
);

/**
 * Forwards the signals this process receives to a guarded command's process group, with `command.kill()`,
 * until the command has ended (or the returned function is called), as x-guard does:
 *
 * - SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM: forwarded as they are, every time;
 * - SIGINT, SIGTERM: the toolkit's shutdown rule (`onShutdownSignals` of `@x/core`): the first is forwarded as
 *   it is; more within 1 s are the same request (timeout(1) signals the process, then its group) and are not
 *   forwarded; one 1 s or more after the first sends SIGKILL to the group.
 *
 * The command's limits still apply afterwards: a command that survives a forwarded signal still gets the
 * ladder when its time or memory limit is reached, and its exit status still says how it ended (128 + n when
 * it died of the forwarded signal n). While the listeners are installed, these signals do not end this
 * process. One that arrives after the spawn but before this call still has its usual effect (SIGHUP ends this
 * process, and the reaper then kills the command): `runGuardedCommand()`'s `forwardSignals` option listens
 * before the spawn, and is what x-guard uses. This function is for a decision taken later.
 *
 * @param command - what `runGuardedCommand()` returned
 * @param options - `signals`: which ones (default: all of {@link forwardedSignals}); a program that handles
 *   SIGINT and SIGTERM itself passes the others only
 * @returns a function that stops forwarding, also usable with `using`
 * @throws GuardError `ERR_X_GUARD_INVALID_OPTION` for a command that is not a `GuardedCommand` or a signal that
 *   is not in {@link forwardedSignals}
 *
 * @example
 * ```ts
 * const command = runGuardedCommand("make", ["-j4"], { timeoutMs: 3_600_000 });
 * if (process.stdin.isTTY) forwardSignals(command); // stops by itself when make has ended
 * const { exitCode } = await command;
 * ```
 */
export function forwardSignals(
  command: GuardedCommand,
  options: ForwardSignalsOptions = {},
): SignalForwarding {
  parse(v.object({ command: commandSchema }), { command });
  const remove = listenAndForward(parse(schema, options).signals ?? forwardedSignals, (signal) =>
    command.kill(signal),
  );
  command.then(remove, remove);
  return Object.assign(remove, { [Symbol.dispose]: remove });
}

/**
 * Installs the listeners of {@link forwardSignals} for `signals`, each passing its signal (or SIGKILL, when a
 * shutdown signal forces) to `kill`.
 *
 * @returns the function that removes them; idempotent
 */
export function listenAndForward(
  signals: readonly ForwardedSignal[],
  kill: (signal: NodeJS.Signals) => void,
): () => void {
  const shutdown = shutdownSignals.filter((signal) => signals.includes(signal as ForwardedSignal));
  const removeShutdown =
    shutdown.length === 0
      ? () => {}
      : onShutdownSignals(kill, { signals: shutdown, force: () => kill("SIGKILL") });
  const others = [...new Set(signals)].filter((signal) => !shutdownSignals.includes(signal));
  for (const signal of others) process.on(signal, kill);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    removeShutdown();
    for (const signal of others) process.off(signal, kill);
  };
}
