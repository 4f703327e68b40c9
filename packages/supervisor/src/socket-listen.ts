import { chmodSync, chownSync, lstatSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import { dirname, join, resolve } from "node:path";
import { ErrorCode, SupervisorError } from "./errors.js";

/**
 * Listens on the Unix socket `path` with its final mode and group from the first moment it exists there: the
 * socket is made in a private directory (mode 0700) created next to `path`, given `mode` and `gid` there, then
 * renamed into place (one atomic `rename`), and the directory is removed. No other process can use it, or see
 * it at `path` with a wider mode, before. Nothing process-wide (such as the umask) is changed.
 *
 * The private directory's name (`.xs-` and 6 characters) is at most 12 characters longer than the socket's
 * name, so a socket path close to the 107-byte limit of Unix socket addresses may need a shorter name.
 *
 * @param server - a server not yet listening
 * @param path - the socket's final path (its directory exists; checked by `prepareSocketPath`)
 * @param mode - its permission bits
 * @param gid - its group, or `undefined` to keep the daemon's
 * @returns the socket's inode, which identifies it for a later removal
 * @throws SupervisorError `ERR_X_SUPERVISOR_SOCKET_PATH` when the socket cannot be given its mode or group
 *   or moved into place; the listen error itself otherwise
 */
export async function listenWithFinalMode(
  server: Server,
  path: string,
  mode: number,
  gid: number | undefined,
): Promise<bigint> {
  const privateDir = mkdtempSync(join(dirname(resolve(path)), ".xs-"));
  try {
    const staging = join(privateDir, "s");
    await new Promise<void>((resolveListen, reject) => {
      server.once("error", reject);
      server.listen(staging, () => {
        server.off("error", reject);
        resolveListen();
      });
    });
    try {
      chmodSync(staging, mode);
      if (gid !== undefined) chownSync(staging, -1, gid);
      renameSync(staging, path);
    } catch (error) {
      server.close();
      throw new SupervisorError(
        ErrorCode.SOCKET_PATH,
        `cannot give the socket mode ${mode.toString(8).padStart(4, "0")}${
          gid === undefined ? "" : ` and group ${gid}`
        } and move it to ${path}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return lstatSync(path, { bigint: true }).ino;
  } finally {
    rmSync(privateDir, { recursive: true, force: true });
  }
}

/**
 * The group id of `group`: a number is used as it is; a name is looked up with `getent group` (so NSS sources
 * such as LDAP count), or in `/etc/group` where `getent` is missing.
 *
 * @throws SupervisorError `ERR_X_SUPERVISOR_INVALID_OPTION` when no group has that name
 */
export function resolveGroupId(group: number | string): number {
  if (typeof group === "number") return group;
  const fromLine = (line: string) => {
    const [name, , gid] = line.split(":");
    return name === group && gid !== undefined && /^\d+$/.test(gid) ? Number(gid) : undefined;
  };
  let lines: string[];
  try {
    // node:child_process is loaded here, not imported: it costs milliseconds at the package's import (issue #31).
    lines = process
      .getBuiltinModule("node:child_process")
      .execFileSync("getent", ["group", "--", group], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      })
      .split("\n");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // getent exits 2 for an unknown name; only a missing getent falls back to the file
    lines = code === "ENOENT" ? readGroupFile() : [];
  }
  for (const line of lines) {
    const gid = fromLine(line);
    if (gid !== undefined) return gid;
  }
  throw new SupervisorError(ErrorCode.INVALID_OPTION, `socketGroup: no group named ${JSON.stringify(group)}`);
}

function readGroupFile(): string[] {
  try {
    return readFileSync("/etc/group", "utf8").split("\n");
  } catch {
    return [];
  }
}
