import { packageTests } from "../../scripts/vitest-preset.js";

export default packageTests("process-guard");
