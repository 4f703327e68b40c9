import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./scripts/vitest-sequencer.js";

/** One test project per package; each package's own `vitest.config.ts` builds on scripts/vitest-preset.ts. */
export default defineConfig({
  test: {
    projects: ["packages/*", "test-support"],
    // Longest file first across projects, so parallel workers (`pnpm test:fast`) end together.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
