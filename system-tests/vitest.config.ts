import { fileURLToPath } from "node:url";
import { packageTests } from "../scripts/vitest-preset.js";

/**
 * The system tests: not a project of the root configuration, so `pnpm test` leaves them out; `pnpm test:system`
 * runs them alone, one file at a time, because they stop and start the services every other suite uses.
 */
export default packageTests("system", {
  root: fileURLToPath(new URL(".", import.meta.url)),
  test: { fileParallelism: false, testTimeout: 300_000 },
});
