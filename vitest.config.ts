import { defineConfig } from "vitest/config";

/** One test project per package; each package's own `vitest.config.ts` builds on scripts/vitest-preset.ts. */
export default defineConfig({
  test: {
    projects: ["packages/*", "test-support"],
  },
});
