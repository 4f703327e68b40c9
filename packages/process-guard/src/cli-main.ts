// The x-guard command, started by cli.ts; everything but starting it lives in command.ts.
import { handleBrokenPipes } from "./broken-pipe.js";
import { GuardExit, runGuardCommand } from "./command.js";
import { GuardError } from "./errors.js";

/** What the bin learns of a run. */
export interface RunHooks {
  /** Called once the command line is valid and a command is about to run (not for `--help` and the like). */
  onCommand?: () => void;
}

/** Runs x-guard with the process's arguments, then exits with its status. */
export function run(hooks: RunHooks = {}): void {
  // `x-guard … | head`: a quiet exit with 141 when x-guard's output is closed, but never while the command runs
  const pipes = handleBrokenPipes();
  runGuardCommand(process.argv.slice(2), pipes, hooks.onCommand).then(
    (status) => process.exit(status),
    (error: unknown) => {
      const text = error instanceof GuardError ? error.message : ((error as Error)?.stack ?? String(error));
      process.stderr.write(`x-guard: ${text}\n`);
      process.exit(GuardExit.FAILURE);
    },
  );
}
