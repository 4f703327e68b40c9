import { fileURLToPath } from "node:url";
import { packageTests } from "../scripts/vitest-preset.js";

/** The test helpers' own tests (a helper a test relies on must itself be right). */
export default packageTests("test-support", {
  root: fileURLToPath(new URL(".", import.meta.url)),
  test: { include: ["*.test.ts"] },
});
