import { packageBuild } from "../../scripts/build-preset.ts";

export default packageBuild({
  index: "src/index.ts",
  cli: "src/cli.ts",
  "watchdog-thread": "src/watchdog-thread.ts",
});
