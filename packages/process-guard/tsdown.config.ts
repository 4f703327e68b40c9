import { commandBuild, packageBuild } from "../../scripts/build-preset.ts";

// x-guard wraps every job, so its start-up counts: its bin (cli.js) loads `cli-main.js`, the command's own
// single-file build, rather than chunks shared with the library. See "Start-up time" in the README.
export default [
  packageBuild(
    { index: "src/index.ts", cli: "src/cli.ts", "watchdog-thread": "src/watchdog-thread.ts" },
    { deps: { neverBundle: [/^\.\/cli-main\.js$/] } },
  ),
  commandBuild({ "cli-main": "src/cli-main.ts" }),
];
