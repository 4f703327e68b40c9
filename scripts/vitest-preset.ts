import { fileURLToPath } from "node:url";
import { defineProject, mergeConfig, type UserWorkspaceConfig } from "vitest/config";

/** Sibling packages resolve to their TypeScript sources (the `@x/source` export condition), never `dist/`. */
const conditions = ["@x/source", "module", "node", "development|production"];

/**
 * The test project every package shares: Node environment, co-located `src/**\/*.test.ts` and integration
 * tests in `test/`, generous timeouts for 2-core machines. A package may pass overrides.
 */
export function packageTests(name: string, overrides: UserWorkspaceConfig = {}) {
  return mergeConfig(
    defineProject({
      resolve: { conditions },
      ssr: { resolve: { conditions, externalConditions: ["@x/source"] } },
      test: {
        name,
        include: ["src/**/*.test.ts", "test/**/*.test.ts"],
        environment: "node",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        // Type tests (`*.test-d.ts`) run through `tsc` over the whole repository's configuration, so they see
        // sibling packages' sources as the type checker does. That is one whole-repository `tsc` per project,
        // so `pnpm test:fast` (X_TEST_TIER=fast) leaves them to `pnpm typecheck`, which checks the same files.
        typecheck: {
          enabled: process.env.X_TEST_TIER !== "fast",
          include: ["src/**/*.test-d.ts"],
          tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)),
        },
      },
    }),
    overrides,
  );
}
