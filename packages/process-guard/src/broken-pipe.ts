import { exitQuietlyOnBrokenPipe, onStdioError } from "@x/core/internal";

/** What {@link runGuardCommand}'s caller does about x-guard's own stdout and stderr breaking. */
export interface BrokenPipeHandling {
  /**
   * Called just before the command starts; the function it returns is called once the command has ended and
   * its output has been copied.
   */
  whileCommandRuns(): () => void;
}

/** Our output is gone: its reader went away (EPIPE), or it is a terminal that hung up (EIO). */
function ignoreLostOutput(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE" && error.code !== "EIO") throw error;
}

/**
 * x-guard's answer to its reader going away (`x-guard … | head`), for the whole life of the process.
 *
 * - Without a running command (usage, `--help`, "command not found"), an EPIPE on stdout or stderr ends
 *   x-guard quietly with 141, as a shell reports a program killed by the same broken pipe
 *   (`exitQuietlyOnBrokenPipe` of `@x/core`).
 * - While the command runs, x-guard must not end: the command would run on without its limits. An EPIPE, or
 *   an EIO from a terminal that hung up (a closed window, a dropped ssh session: x-guard has forwarded the
 *   SIGHUP), is then ignored: x-guard's own lines are lost, a copy of the command's output
 *   (`--progress-on-output`) stops and sends the command's group SIGPIPE (see `runGuardedCommand`), and x-guard
 *   exits with the usual status once the command has ended. A command writing to the inherited stdout meets the broken pipe directly, and
 *   x-guard reports how it ended (141 when SIGPIPE killed it).
 */
export function handleBrokenPipes(): BrokenPipeHandling {
  let removeQuietExit = exitQuietlyOnBrokenPipe();
  return {
    whileCommandRuns() {
      removeQuietExit();
      const removeIgnore = onStdioError(ignoreLostOutput);
      return () => {
        removeIgnore();
        removeQuietExit = exitQuietlyOnBrokenPipe();
      };
    },
  };
}
