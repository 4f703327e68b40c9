import { packageBuild } from "../../scripts/build-preset.ts";

export default packageBuild({
  index: "src/index.ts",
  cli: "src/cli.ts",
  "checkpointer-thread": "src/checkpointer-thread.ts",
  "reader-thread": "src/reader-thread.ts",
});
