#!/usr/bin/env node
// The x-rmq-storage command. Node's module compile cache first (Node 22.1+; a no-op where it is missing, and under
// NODE_DISABLE_COMPILE_CACHE=1), in a directory no other user controls (else in this user's own cache directory,
// else none): later runs then skip compiling the modules the command loads, which the static imports of this file
// would have loaded before the call (the one import here is a small module of builtins). See "Startup" in the README.
import { enableCompileCacheSafely } from "@x/core/private-files";

enableCompileCacheSafely();
const { run } = await import("./cli-main.js");
await run();
