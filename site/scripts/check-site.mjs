// `pnpm check:site`: builds the site (scripts/build.mjs) when .vitepress/dist is missing or older than any
// of its sources, then runs the site's tests: every link and anchor, a doc comment and an API heading for
// every export, and the pages in headless Chromium. Prints the totals as "N passed, M failed" and exits
// non-zero on any failure, a failed build included.
import { spawnSync } from "node:child_process";
import { existsSync, globSync, statSync } from "node:fs";
import { join } from "node:path";
import { root } from "./pages.mjs";

const site = join(root, "site");
const built = join(site, ".vitepress/dist/index.html");
/** Everything the site is made from: the Markdown it copies, the sources TypeDoc reads, its own config. */
const sources = [
  "README.md",
  "packages/*/README.md",
  "packages/*/package.json",
  "packages/*/src/**/*.ts",
  "docs/**/*",
  "site/scripts/*",
  "site/.vitepress/config.mts",
  "site/typedoc.config.mjs",
  "site/tsconfig.typedoc.json",
];

const newest = Math.max(
  ...sources
    .flatMap((pattern) => globSync(pattern, { cwd: root }))
    .map((path) => statSync(join(root, path)).mtimeMs),
);
if (!existsSync(built) || statSync(built).mtimeMs < newest) {
  console.log("check:site: the built site is missing or older than its sources: building it");
  const build = spawnSync("node", [join(site, "scripts/build.mjs")], { stdio: "inherit" });
  if (build.status !== 0) {
    console.log("FAILED pnpm docs:build");
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
const tests = spawnSync(
  "node",
  [join(root, "scripts/test-summary.mjs"), "--config", join(site, "vitest.config.ts")],
  { cwd: root, stdio: "inherit" },
);
process.exit(tests.status ?? 1);
