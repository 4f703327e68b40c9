import { lstatSync, statSync, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ErrorCode, SupervisorError } from "./errors.js";

/**
 * Checks the socket path before listening (and before the daemon creates anything): its directory must exist;
 * a missing path is fine; a socket nobody accepts on is stale and removed; a live socket or anything that is
 * not a socket is an error, and the path is left alone.
 *
 * The daemon stats sockets with `{ bigint: true }` only: Node's `realpathSync` reads the type of the last
 * file stat'ed into a shared array, and a socket there stops it resolving symbolic links, so that a later
 * `require` through pnpm's symlinks fails (nodejs/node#51142).
 *
 * @throws SupervisorError `ERR_X_SUPERVISOR_SOCKET_PATH` (missing directory, not a socket, cannot probe) or
 *   `ERR_X_SUPERVISOR_SOCKET_IN_USE`
 */
export async function prepareSocketPath(path: string): Promise<void> {
  checkSocketDirectory(path);
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path, { bigint: true }).isSocket();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new SupervisorError(ErrorCode.SOCKET_PATH, `cannot inspect socket path ${path}`, {
      cause: error,
    });
  }
  if (!isSocket) {
    throw new SupervisorError(ErrorCode.SOCKET_PATH, `${path} exists and is not a socket`);
  }
  const alive = await new Promise<boolean | Error>((resolve) => {
    // node:net is loaded here, not imported: it and its streams cost milliseconds at import (issue #31).
    const probe = process.getBuiltinModule("node:net").createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ECONNREFUSED" ? false : error),
    );
  });
  if (alive === true) {
    throw new SupervisorError(
      ErrorCode.SOCKET_IN_USE,
      `another supervisor is listening on ${path}; stop it first`,
    );
  }
  if (alive instanceof Error) {
    throw new SupervisorError(ErrorCode.SOCKET_PATH, `cannot probe socket ${path}`, {
      cause: alive,
    });
  }
  unlinkSync(path);
}

/**
 * The socket's directory must exist and be a directory: the daemon never creates it.
 *
 * @throws SupervisorError `ERR_X_SUPERVISOR_SOCKET_PATH` when it is missing or not a directory
 */
export function checkSocketDirectory(path: string): void {
  const directory = dirname(resolve(path));
  let isDirectory: boolean;
  try {
    isDirectory = statSync(directory, { bigint: true }).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" || code === "ENOTDIR"
        ? "does not exist; create it first (the daemon does not create the socket's directory)"
        : `cannot be inspected (${code})`;
    throw new SupervisorError(ErrorCode.SOCKET_PATH, `the socket's directory ${directory} ${why}`, {
      cause: error,
    });
  }
  if (!isDirectory) {
    throw new SupervisorError(
      ErrorCode.SOCKET_PATH,
      `the socket's directory ${directory} is not a directory`,
    );
  }
}
