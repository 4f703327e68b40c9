import { packageBuild } from "../../scripts/build-preset.ts";

export default packageBuild({
  index: "src/index.ts",
  cli: "src/cli.ts",
  "server-process": "src/server-process.ts",
  "sqlite-writer-thread": "src/sqlite-writer-thread.ts",
  routing: "src/routing-entry.ts",
});
