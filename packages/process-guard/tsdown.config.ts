import { commandBuild, packageBuild } from "../../scripts/build-preset.ts";

// x-guard wraps every job, so its start-up counts. Its bin (`cli.cjs`) and its command path (`cli-main.cjs`)
// are builds of their own, sharing no chunk with the library: the bin runs the command path through a code
// cache of its own (src/code-cache.ts). See "Start-up time" in the README.
export default [
  packageBuild({ index: "src/index.ts", "watchdog-thread": "src/watchdog-thread.ts" }),
  commandBuild(
    { cli: "src/cli.ts" },
    { deps: { alwaysBundle: [/^@x\/core(\/|$)/], neverBundle: [/^\.\/cli-main\.js$/] } },
  ),
  commandBuild({ "cli-main": "src/cli-main.ts" }),
];
