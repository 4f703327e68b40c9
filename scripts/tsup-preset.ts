import { defineConfig, type Options } from "tsup";

/**
 * The one build every package shares: ESM for Node 20, declarations, source maps, one file per entry.
 * A package passes its entries (and `cli` for a command, which gets a shebang).
 */
export function packageBuild(entry: Record<string, string>, overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    ...overrides,
  });
}
