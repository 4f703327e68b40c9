/**
 * Loading a CommonJS file of ours through a V8 code cache that keeps every function a run compiled.
 *
 * Node's module compile cache stores what V8 compiled when a module was loaded: its top level, not the
 * functions compiled lazily when they first run, which a short-lived command then compiles again on every
 * start. A code cache made after the run (`vm.Script#createCachedData()`) holds those too. x-guard's bin loads
 * its command through {@link loadWithCodeCache}; see "Start-up time" in the README.
 */
import { checkPrivateDirectory, writeFileAtomic } from "@x/core/private-files";

const fs = process.getBuiltinModule("node:fs");
const { basename, dirname, join } = process.getBuiltinModule("node:path");
const vm = process.getBuiltinModule("node:vm");
const { createRequire } = process.getBuiltinModule("node:module");

/** A CommonJS file run by {@link loadWithCodeCache}. */
export interface CachedScript {
  /** What the file exported (`module.exports`). */
  exports: unknown;
  /** Whether V8 took the stored code cache (`false`: there was none, or it was stale or unusable). */
  cached: boolean;
  /**
   * Stores the code compiled so far, every function run until now included, unless a usable cache was taken
   * or there is no cache directory. Never throws: a cache that cannot be written only stays off. Call it late
   * (x-guard calls it on exit), so that the functions a run needs are compiled by then.
   */
  saveCache(): void;
}

/** Options of {@link loadWithCodeCache}. */
export interface LoadOptions {
  /**
   * `cacheDir` is a path that `checkPrivateDirectory()` or `enableCompileCacheSafely()` of `@x/core` returned
   * just now: it is not checked again. Default `false`.
   */
  checkedDir?: boolean;
}

/** FNV-1a, 32 bits: a short, stable name for a file's path. */
function hashOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(36);
}

/**
 * The cache at `path`, if it belongs to this user and nobody else can write it (a cache that another user
 * could replace would run their code): `undefined` otherwise, or when there is none.
 */
function readOwnFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    const ours = process.getuid === undefined || stat.uid === process.getuid();
    if (!ours || (stat.mode & 0o022) !== 0) return undefined;
    const data = Buffer.allocUnsafe(stat.size);
    return fs.readSync(fd, data) === stat.size ? data : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `data` as `dir/name` atomically (a process starting meanwhile reads the old cache or the new one,
 * never half of one, and nothing planted at a temporary name is followed), then removes the caches of earlier
 * builds of the same file (`prefix`).
 */
function writeCache(dir: string, name: string, prefix: string, data: Buffer): void {
  try {
    writeFileAtomic(join(dir, name), data, { mode: 0o600, fsync: false });
    for (const other of fs.readdirSync(dir)) {
      if (other !== name && other.startsWith(prefix) && !other.endsWith(".tmp")) {
        fs.rmSync(join(dir, other), { force: true });
      }
    }
  } catch {
    // a cache that cannot be written only stays off; writeFileAtomic left no temporary file behind
  }
}

/**
 * A `require` (and `require.resolve`) for `file` that takes Node's builtins without a resolver of its own (a
 * command's build requires little else, and making one costs a third of a millisecond), and makes one with
 * `module.createRequire()` for anything else.
 */
function requireFor(file: string) {
  let resolver: NodeJS.Require | undefined;
  const full = (): NodeJS.Require => {
    resolver ??= createRequire(file);
    return resolver;
  };
  const require = (id: string): unknown => process.getBuiltinModule(id) ?? full()(id);
  return Object.assign(require, { resolve: (id: string) => full().resolve(id) });
}

/**
 * Runs the CommonJS file `file` (with `require`, `require.resolve`, `module`, `__filename` and `__dirname`;
 * dynamic `import()` through Node's loader), compiled with the code cache stored for it in `cacheDir`, if any.
 *
 * The cache is named after the file's path, size, modification time and inode, so an edited or reinstalled
 * file never meets the cache of another; V8 checks its own version and flags and refuses a cache made under
 * others (`cached: false`, and {@link CachedScript.saveCache} replaces it). A directory that another user owns or
 * could write, or that sits inside one, is not used at all (see `checkPrivateDirectory` in `@x/core`; a caller
 * that has just checked it says so with {@link LoadOptions.checkedDir}): its cache would run their code, and
 * writing there could be turned against this user's files.
 *
 * @param file - absolute path of the file
 * @param cacheDir - where the cache is kept; `undefined`, or a directory that is not this user's alone: no cache
 * @param options - see {@link LoadOptions}
 * @throws what reading the file throws (e.g. `ENOENT`), and what its top level throws
 */
export function loadWithCodeCache(
  file: string,
  cacheDir: string | undefined,
  options: LoadOptions = {},
): CachedScript {
  const source = fs.readFileSync(file, "utf8");
  let cachePath: { dir: string; name: string; prefix: string } | undefined;
  const dir = cacheDir === undefined || options.checkedDir ? cacheDir : checkPrivateDirectory(cacheDir).path;
  if (dir !== undefined) {
    const stat = fs.statSync(file);
    const prefix = `${basename(file)}.${hashOf(file)}.`;
    const name = `${prefix}${stat.size}-${Math.round(stat.mtimeMs * 1000)}-${stat.ino}.v8-code-cache`;
    cachePath = { dir, name, prefix };
  }
  const cachedData = cachePath === undefined ? undefined : readOwnFile(join(cachePath.dir, cachePath.name));
  // the wrapper shares the first line, so that positions in the file's other lines stay where they are
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData === undefined ? {} : { cachedData }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const cached = cachedData !== undefined && script.cachedDataRejected === false;
  const module = { exports: {} as unknown };
  const body = script.runInThisContext() as (...args: unknown[]) => void;
  body.call(module.exports, module.exports, requireFor(file), module, file, dirname(file));
  return {
    exports: module.exports,
    cached,
    saveCache() {
      if (cached || cachePath === undefined) return;
      writeCache(cachePath.dir, cachePath.name, cachePath.prefix, script.createCachedData());
    },
  };
}
