import { defineConfig, type UserConfig } from "tsdown";

/**
 * The one build every package shares: ESM for Node 22+, bundled declarations, source maps, one file per
 * entry. A package passes its entries (and `cli` for a command, whose shebang tsdown keeps).
 */
export function packageBuild(entry: Record<string, string>, overrides: UserConfig = {}) {
  return defineConfig({
    entry,
    format: "esm",
    target: "node22.12",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    fixedExtension: false,
    ...overrides,
  });
}
