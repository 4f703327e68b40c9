#!/usr/bin/env node
// The x-supervisor command. Node's module compile cache first (Node 22.1+; a no-op where it is missing, and under
// NODE_DISABLE_COMPILE_CACHE=1): later runs then skip compiling the modules the command loads, which the static
// imports of this file would have loaded before the call. See "Startup" in the README.
process.getBuiltinModule("node:module").enableCompileCache?.();
const { run } = await import("./cli-main.js");
await run();
