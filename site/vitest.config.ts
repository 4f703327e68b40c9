import { defineConfig } from "vitest/config";

/**
 * The site's tests, run by `pnpm check:site` against the built site (.vitepress/dist). Not a project of the
 * root vitest.config.ts: they need `pnpm docs:build` first, and a browser.
 */
export default defineConfig({
  test: {
    name: "site",
    root: import.meta.dirname,
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
