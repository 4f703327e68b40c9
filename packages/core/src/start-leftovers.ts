// node:fs is loaded where it is used (process.getBuiltinModule), not imported: see private-files.ts.

/** What {@link trackCreatedPaths} returns: the paths a start may create, and how to remove them again. */
export interface CreatedPaths {
  /** The paths that did not exist when tracking began (for a directory, its topmost missing ancestor). */
  readonly missing: readonly string[];
  /** Removes whatever now exists of {@link CreatedPaths.missing} (recursively); what existed before stays. */
  remove(): void;
}

/**
 * Notes which of `paths` do not exist yet, so that a start that fails can remove what it created (a database,
 * its lock file, a directory) and nothing that was there before. For a path whose parent is missing too, the
 * topmost missing ancestor is noted, so `mkdir -p` is undone whole.
 *
 * @param paths - the files and directories a start may create
 */
export function trackCreatedPaths(paths: readonly string[]): CreatedPaths {
  const { existsSync, rmSync } = process.getBuiltinModule("node:fs");
  const { dirname, resolve } = process.getBuiltinModule("node:path");
  const missing = new Set<string>();
  for (const given of paths) {
    let path = resolve(given);
    if (existsSync(path)) continue;
    while (dirname(path) !== path && !existsSync(dirname(path))) path = dirname(path);
    missing.add(path);
  }
  return {
    missing: [...missing],
    remove() {
      for (const path of missing) rmSync(path, { recursive: true, force: true });
    },
  };
}
