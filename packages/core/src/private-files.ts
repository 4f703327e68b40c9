/**
 * Files and directories no other user controls: an atomic write that never follows a link another user
 * planted, a file created only if nothing is at its path yet, and cache directories checked before use.
 *
 * Node's builtins are taken with `process.getBuiltinModule()` where they are used: x-guard's bin runs this
 * before anything else, and an `import` of `node:fs` would load its `promises` module and streams too.
 */
import type { Logger } from "./logger.js";

/** Tries at a fresh temporary name before {@link writeFileAtomic} gives up on names that exist already. */
const temporaryNameTries = 8;

/** What {@link writeFileAtomic} writes: bytes or text, or a function that writes to the open file itself. */
export type AtomicContent = string | NodeJS.ArrayBufferView | ((fd: number) => void);

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the new file, before the process's umask. Default `0o600`: this user only. */
  mode?: number;
  /** Flush the file to disk before it takes the target's place (`fsync`). Default `true`. */
  fsync?: boolean;
}

/**
 * Writes `target` atomically: a reader sees the old file or the new one, never half of one. The content goes
 * to a new file of a random name in `target`'s own directory, created with `O_CREAT | O_EXCL | O_NOFOLLOW`
 * (so never through a file or link someone put there), which is then renamed over `target` (a link at
 * `target` is replaced, not followed). On failure the temporary file is removed and `target` is left as it was.
 *
 * @param target - the file to replace (or create)
 * @param content - what to write; a function gets the open descriptor and writes to it with `fs.writeSync`
 * @param options - see {@link AtomicWriteOptions}
 * @throws what the file system throws (`EACCES`, `ENOSPC`, …), and what `content` throws
 */
export function writeFileAtomic(
  target: string,
  content: AtomicContent,
  options: AtomicWriteOptions = {},
): void {
  const fs = process.getBuiltinModule("node:fs");
  const { basename, dirname, join } = process.getBuiltinModule("node:path");
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = fs.constants;
  let temporary = "";
  let fd: number | undefined;
  for (let tries = 1; fd === undefined; tries++) {
    temporary = join(dirname(target), `.${basename(target)}.${randomName()}.tmp`);
    try {
      fd = fs.openSync(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, options.mode ?? 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries === temporaryNameTries) throw error;
    }
  }
  try {
    if (typeof content === "function") content(fd);
    else fs.writeFileSync(fd, content);
    if (options.fsync ?? true) fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temporary, target);
  } catch (error) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

/** 16 random base-36 characters. Not secret: `O_EXCL` is what keeps a planted file out, this only avoids collisions. */
function randomName(): string {
  const part = () => Math.floor(Math.random() * 36 ** 8).toString(36);
  return `${part()}${part()}`;
}

/**
 * Creates an empty file at `path` with `mode`, if nothing is there yet: `O_CREAT | O_EXCL | O_NOFOLLOW`, so a
 * file or a link already at `path` is never opened, let alone followed. Used to give a database its mode before
 * SQLite opens it (SQLite gives its `-wal` and `-shm` files the database's mode).
 *
 * @param path - the file to create
 * @param mode - its mode, before the process's umask. Default `0o600`.
 * @returns `true` when it was created, `false` when something was at `path` already
 * @throws what the file system throws otherwise (`ENOENT` for a missing directory, `EACCES`, …)
 */
export function createFileExclusive(path: string, mode = 0o600): boolean {
  const fs = process.getBuiltinModule("node:fs");
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = fs.constants;
  try {
    fs.closeSync(fs.openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** What {@link checkPrivateDirectory} found: the directory to use, or why not to. */
export type PrivateDirectoryCheck =
  | { path: string; problem?: undefined }
  | { path?: undefined; problem: string };

/**
 * Whether `dir` is safe to keep a cache in, which the next run will load as code: a directory (not a link)
 * that this user owns and that neither its group nor others can write, inside directories that another user
 * could not rename it out of (each owned by this user or root, and not writable by group or others unless
 * sticky, as `/tmp` is). Where a user id does not exist (Windows), only "is a directory" is checked.
 *
 * @param dir - the directory
 * @returns `{ path }`: the directory with the links of its parents resolved, the path to use from now on (a link
 *   above it could be changed later); or `{ problem }`: why not, in words ("is owned by uid 65534")
 */
export function checkPrivateDirectory(dir: string): PrivateDirectoryCheck {
  const fs = process.getBuiltinModule("node:fs");
  const { basename, dirname, join, resolve } = process.getBuiltinModule("node:path");
  const uid = process.getuid?.();
  const absolute = resolve(dir);
  try {
    const stat = fs.lstatSync(absolute);
    if (stat.isSymbolicLink()) return { problem: "is a symbolic link" };
    if (!stat.isDirectory()) return { problem: "is not a directory" };
    if (uid === undefined) return { path: absolute };
    if (stat.uid !== uid) return { problem: `is owned by uid ${stat.uid}, not ${uid}` };
    if ((stat.mode & 0o022) !== 0) return { problem: `is writable by others (mode ${octal(stat.mode)})` };
    const parent = fs.realpathSync.native(dirname(absolute));
    for (let above = parent; ; above = dirname(above)) {
      const problem = parentProblem(fs.lstatSync(above), uid);
      if (problem !== undefined) return { problem: `is inside ${above}, ${problem}` };
      if (dirname(above) === above) break;
    }
    return { path: join(parent, basename(absolute)) };
  } catch (error) {
    return { problem: `cannot be checked (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
}

/** Why another user could rename entries of a directory above a private one, or `undefined`. */
function parentProblem(stat: { uid: number; mode: number }, uid: number): string | undefined {
  if (stat.uid !== uid && stat.uid !== 0) return `owned by uid ${stat.uid}`;
  const sticky = (stat.mode & 0o1000) !== 0;
  if ((stat.mode & 0o022) !== 0 && !sticky) return `writable by others (mode ${octal(stat.mode)})`;
  return undefined;
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/** Options of {@link chooseCacheDirectory} and {@link enableCompileCacheSafely}. */
export interface CacheDirectoryOptions {
  /** Where a directory that is not used is reported, at `debug`. Default: see each function. */
  logger?: Logger;
  /** The environment (`XDG_CACHE_HOME`, `HOME`, `TMPDIR`, `NODE_COMPILE_CACHE`). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The directory to keep a cache in: `preferred` (created `0700` if missing) when {@link checkPrivateDirectory}
 * finds it safe, else this user's own cache directory `$XDG_CACHE_HOME/x` (`~/.cache/x` without it; created
 * `0700`, its parents too) when that one is, else none. A directory passed over is logged at `debug` with why.
 *
 * @param preferred - the directory to try first; `undefined`: go to this user's own at once
 * @param options - see {@link CacheDirectoryOptions}; the default logger is silent
 * @returns the directory's path (its parents' links resolved), or `undefined`: keep no cache
 */
export function chooseCacheDirectory(
  preferred: string | undefined,
  options: CacheDirectoryOptions = {},
): string | undefined {
  const { logger, env = process.env } = options;
  const fs = process.getBuiltinModule("node:fs");
  const { join } = process.getBuiltinModule("node:path");
  const tryDir = (dir: string, recursive: boolean): PrivateDirectoryCheck => {
    try {
      fs.mkdirSync(dir, { mode: 0o700, recursive });
    } catch {
      // there already, or it cannot be made: the check says which
    }
    return checkPrivateDirectory(dir);
  };
  if (preferred !== undefined) {
    const check = tryDir(preferred, false);
    if (check.path !== undefined) return check.path;
    logger?.debug(
      { dir: preferred, problem: check.problem },
      `cache directory ${preferred} ${check.problem}`,
    );
  }
  const home = env.XDG_CACHE_HOME?.startsWith("/") ? env.XDG_CACHE_HOME : homeCache(env);
  if (home === undefined) {
    logger?.debug("no cache directory of this user's own (no HOME): keeping no cache");
    return undefined;
  }
  const own = join(home, "x");
  const check = tryDir(own, true);
  if (check.path !== undefined) {
    if (preferred !== undefined) logger?.debug({ dir: check.path }, `using cache directory ${check.path}`);
    return check.path;
  }
  logger?.debug(
    { dir: own, problem: check.problem },
    `cache directory ${own} ${check.problem}: keeping no cache`,
  );
  return undefined;
}

/** `$HOME/.cache`, or `undefined` without a home. */
function homeCache(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.HOME?.startsWith("/") ? env.HOME : undefined;
  return home === undefined ? undefined : `${home.replace(/\/+$/, "")}/.cache`;
}

/**
 * Turns on Node's module compile cache (`module.enableCompileCache()`, Node 22.1+) for a command, in a
 * directory no other user controls. Node's default, `node-compile-cache` under the temporary directory, is
 * shared by every user of the machine: it is used only when {@link chooseCacheDirectory} finds it safe, else
 * this user's own cache directory, else no cache. `NODE_DISABLE_COMPILE_CACHE` leaves it off (set to anything,
 * as Node reads it); `NODE_COMPILE_CACHE` names the directory, which Node itself then uses from its start on.
 *
 * @param options - see {@link CacheDirectoryOptions}; the default logger writes through Node's
 *   `util.debuglog("x-cache")`: `NODE_DEBUG=x-cache` prints why a directory was passed over
 * @returns the directory Node keeps its entries in (`module.getCompileCacheDir()`) when it is on and safe, for
 *   caches of the command's own; `undefined` otherwise
 */
export function enableCompileCacheSafely(options: CacheDirectoryOptions = {}): string | undefined {
  const { env = process.env, logger = debugLogger("x-cache") } = options;
  const { enableCompileCache, getCompileCacheDir } = process.getBuiltinModule("node:module");
  if (enableCompileCache === undefined || env.NODE_DISABLE_COMPILE_CACHE !== undefined) return undefined;
  if (!env.NODE_COMPILE_CACHE) {
    const temporary = (env.TMPDIR || env.TMP || env.TEMP || "/tmp").replace(/(.)\/+$/, "$1");
    const dir = chooseCacheDirectory(`${temporary}/node-compile-cache`, { env, logger });
    if (dir === undefined) return undefined;
    enableCompileCache(dir);
  }
  const entries = getCompileCacheDir?.();
  if (entries === undefined) return undefined;
  const check = checkPrivateDirectory(entries);
  if (check.problem !== undefined)
    logger.debug({ dir: entries }, `compile cache ${entries} ${check.problem}`);
  return check.path;
}

/**
 * A {@link Logger} that prints `debug` lines (and the others) through Node's `util.debuglog(section)`: only
 * when `NODE_DEBUG` names `section`, on stderr. Node's `util` is loaded at the first line.
 */
function debugLogger(section: string): Logger {
  let print: ((message: string) => void) | undefined;
  const log = (fields: object | string, message?: string) => {
    print ??= process.getBuiltinModule("node:util").debuglog(section);
    print(typeof fields === "string" ? fields : (message ?? JSON.stringify(fields)));
  };
  return { debug: log, info: log, warn: log, error: log };
}
