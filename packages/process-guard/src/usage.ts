import { infoFlagsHelp } from "@x/core/internal";

/**
 * The text of `x-guard --help`. Built when asked for: a command that runs something never needs it.
 */
export function usageText(): string {
  return `Usage: x-guard [options] DURATION COMMAND [ARG]…     (as timeout(1))
   or: x-guard [options] [--timeout DURATION] [--max-memory SIZE] [--] COMMAND [ARG]…

Runs COMMAND in a process group of its own under a time and/or memory limit. When a limit is reached,
the whole group gets the first signal (-s, TERM by default), then KILL -k later if -k is given, as
timeout(1) does. --grace or --send-kill choose x-guard's three steps instead: SIGINT, then SIGTERM a
grace period later, then SIGTERM again (or SIGKILL with --send-kill).

Options (long ones may be shortened to any unambiguous prefix):
  DURATION              without --timeout, the first operand is the time limit, as timeout(1) reads
                        it: a number (1.5, 1e2, inf) with an optional s, m, h or d suffix (0: none)
  --timeout=DURATION    the time limit, written the same way (0: at once)
  -s, --signal=SIG      the first signal a limit sends: a name (TERM, SIGINT, RTMIN+1, EXIT) or a
                        number (default TERM)
  -k, --kill-after=DURATION
                        also send KILL this long after the first signal (0: never)
  --preserve-status     exit with the command's status even when a limit stopped it
  --foreground          let the command use the terminal: it stays in x-guard's process group, and a
                        limit signals it alone (its children are not signalled)
  -v, --verbose         report each signal sent, and what a limit did, on stderr
  --grace=DURATION      x-guard's three steps, this far apart, written as --timeout (default 15 for
                        time, 5 for memory)
  --send-kill           x-guard's three steps, the last one SIGKILL
  --max-memory=SIZE     limit on the resident memory of the command and all its descendants: bytes,
                        or with a K, M or G suffix (×1024): 512M, 1.5G, 100KiB
  --progress-on-output  restart the time limit whenever the command writes to stdout or stderr
${infoFlagsHelp(24)}

A time limit or --max-memory is required.

Exit status:
  124  the time limit was reached (whatever happened next)
  122  the memory limit was exceeded
  125  x-guard itself failed, or the command line is wrong
  126  the command cannot be run
  127  the command was not found
  137  the command was killed by SIGKILL (after the time limit too, as timeout(1), unless
       --grace or --send-kill chose x-guard's three steps: 124)
  128+n  the command died of signal n (not sent by x-guard as a guard)
  otherwise the command's own exit status

Signals:
  SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to x-guard are forwarded to the command's process group,
  every time; SIGALRM is the time limit, reached now, as for timeout(1). A first SIGINT or SIGTERM is forwarded too; more within 1 s are the
  same request (timeout(1) signals x-guard, then its group); one 1 s or more later sends SIGKILL. The limits still apply
  afterwards, and the exit status says how the command ended (128+n if it died of signal n).
  If x-guard itself dies (even of SIGKILL), a reaper process kills the command's group.
`;
}
