import { packageBuild } from "../../scripts/tsup-preset.js";

export default packageBuild({
  index: "src/index.ts",
  cli: "src/cli.ts",
  "server-process": "src/server-process.ts",
});
