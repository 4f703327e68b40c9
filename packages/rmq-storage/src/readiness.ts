import type { Logger } from "@x/core";
import { UsageError } from "@x/core/internal";

/** The line `x-rmq-storage serve` writes once every queue of its ranges has a consumer. */
export const READY_LINE = "ready";

/** `--ready-fd`: a file descriptor open in this process, checked before the server starts. */
export function readyFd(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const fd = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(fd >= 3))
    throw new UsageError(`--ready-fd expects a file descriptor ≥ 3, got ${JSON.stringify(value)}`);
  try {
    // node:fs loaded here, not imported: the CLI's --help reads READY_LINE from this module
    process.getBuiltinModule("node:fs").fstatSync(fd);
  } catch {
    throw new UsageError(`--ready-fd ${fd} is not an open file descriptor`);
  }
  return fd;
}

/**
 * Tells whoever waits that the server is ready: {@link READY_LINE} on stdout, or on `fd` (then closed,
 * as s6's notification-fd and similar supervisors expect), and `READY=1` to systemd when `NOTIFY_SOCKET`
 * is set. Node has no datagram Unix sockets, so systemd is told through `systemd-notify --ready`, which
 * needs `NotifyAccess=all` in the unit (the message comes from a child process).
 */
export function announceReady(fd: number | undefined, logger: Logger): void {
  const line = `${READY_LINE}\n`;
  if (fd === undefined) process.stdout.write(line);
  else
    try {
      const fs = process.getBuiltinModule("node:fs");
      fs.writeSync(fd, line);
      fs.closeSync(fd);
    } catch (error) {
      logger.warn({ err: error, fd }, "cannot write the ready line to --ready-fd");
    }
  if (process.env.NOTIFY_SOCKET) {
    // Loaded here rather than imported: the CLI's --help reads READY_LINE from this module.
    const { execFile } = process.getBuiltinModule("node:child_process");
    execFile("systemd-notify", ["--ready"], (error) => {
      if (error) logger.warn({ err: error }, "NOTIFY_SOCKET is set but systemd-notify --ready failed");
    });
  }
}
