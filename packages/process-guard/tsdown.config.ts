import { commandBuild, packageBuild } from "../../scripts/build-preset.ts";

// x-guard wraps every job, so its start-up counts. Its bin (`cli.cjs`) and its command path (`cli-main.cjs`)
// are builds of their own, sharing no chunk with the library: the bin runs the command path through a code
// cache of its own (src/code-cache.ts). See "Start-up time" in the README.
/**
 * The first lines of the bin: a script for /bin/sh and, to JavaScript, a string and a comment. Node resets the
 * signals its caller left ignored (`trap '' PIPE`, `nohup`), which the command must inherit as under
 * `timeout(1)`, so the shell reads them from its own `/proc/self/stat` (field 33, the mask of ignored signals
 * in decimal; one line, read with builtins only) and passes them on in `X_GUARD_SIGIGN` to Node running this
 * same file.
 */
const shellBanner = `#!/bin/sh
':' //; f() { set -- \${1##*") "}; s=\${31}; }; s=; read -r l 2>/dev/null </proc/self/stat && f "$l"; X_GUARD_SIGIGN=$s exec node "$0" "$@"`;

export default [
  packageBuild({ index: "src/index.ts", "watchdog-thread": "src/watchdog-thread.ts" }),
  commandBuild(
    { cli: "src/cli.ts" },
    {
      deps: { alwaysBundle: [/^@x\/core(\/|$)/], neverBundle: [/^\.\/cli-main\.js$/] },
      outputOptions: { codeSplitting: false, comments: false, postBanner: shellBanner },
    },
  ),
  commandBuild({ "cli-main": "src/cli-main.ts" }),
];
