import { exitQuietlyOnBrokenPipe, onStdioError } from "@x/core/internal";
import { errnoText } from "./errno-text.js";

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
 * - Without a running command, any other failed write (`--help > /dev/full`) ends x-guard with
 *   `x-guard: write error: No space left on device` and 125, as `timeout(1)`.
 * - While the command runs, x-guard must not end: the command would run on without its limits. An EPIPE, or
 *   an EIO from a terminal that hung up (a closed window, a dropped ssh session: x-guard has forwarded the
 *   SIGHUP), is then ignored: x-guard's own lines are lost, a copy of the command's output
 *   (`--progress-on-output`) stops and sends the command's group SIGPIPE (see `runGuardedCommand`), and x-guard
 *   exits with the usual status once the command has ended. A command writing to the inherited stdout meets the broken pipe directly, and
 *   x-guard reports how it ended (141 when SIGPIPE killed it).
 */
export function handleBrokenPipes(): BrokenPipeHandling {
  let running = false;
  // first, so that it answers before the quiet exit's handler rethrows what is not a broken pipe
  onStdioError((error) => {
    if (running || error.code === "EPIPE") return;
    try {
      process.getBuiltinModule("node:fs").writeSync(2, `x-guard: write error: ${errnoText(error)}\n`);
    } catch {}
    process.exit(125); // as timeout(1): x-guard itself failed
  });
  let removeQuietExit = exitQuietlyOnBrokenPipe();
  return {
    whileCommandRuns() {
      running = true;
      removeQuietExit();
      const removeIgnore = onStdioError(ignoreLostOutput);
      return () => {
        running = false;
        removeIgnore();
        removeQuietExit = exitQuietlyOnBrokenPipe();
      };
    },
  };
}
