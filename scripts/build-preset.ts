import { defineConfig, type UserConfig } from "tsdown";

/**
 * The one build every package shares: ESM for Node 22+, bundled declarations, source maps, one file per
 * entry. A package passes its entries (and `cli` for a command, whose shebang tsdown keeps).
 *
 * Every declaration file starts with `/// <reference types="node" />`: the declarations name Node's types
 * (`node:events`, `NodeJS.Signals`...), and a consumer's TypeScript 7 loads no `@types` package unless
 * something asks for it (its `types` defaults to `[]`), so each file asks for `@types/node` itself.
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
    banner: { dts: nodeTypesReference },
    ...overrides,
  });
}

/** The directive that makes a declaration file load `@types/node` whatever the consumer's `types` says. */
const nodeTypesReference = '/// <reference types="node" />';

/**
 * A command's own build, for a command whose start-up matters (x-guard wraps every job): its entry and all it
 * imports, `@x/core` included, in one CommonJS file (`<entry>.cjs`) whose lazy `import()`s stay lazy (modules
 * evaluated on first use), sharing nothing with the library's build. The command's bin runs it as a script
 * through a code cache that keeps what a run compiled (process-guard's `src/code-cache.ts`), which an ES module
 * cannot have; its comments are left out, as the less source there is to read the sooner it starts. The file
 * goes beside the library's (no clean), with no declarations: nothing imports it but the command's bin.
 */
export function commandBuild(entry: Record<string, string>, overrides: UserConfig = {}) {
  return packageBuild(entry, {
    dts: false,
    clean: false,
    format: "cjs",
    deps: { alwaysBundle: [/^@x\/core(\/|$)/] },
    outputOptions: { codeSplitting: false, comments: false },
    ...overrides,
  });
}
