// The x-guard command, built as CommonJS (`dist/cli.cjs`), which starts as a /bin/sh script (see the banner
// in tsdown.config.ts): Node resets the signals its caller left ignored, so the shell passes them on first.
// Node starts a CommonJS file sooner than a module, and this one has no `await`. Node's module compile cache
// first (Node 22.1+; a no-op where it is missing, and under NODE_DISABLE_COMPILE_CACHE=1), for the modules
// loaded later, in a directory no other user controls (else in this user's own cache directory, else none).
// The command itself (`cli-main.cjs`, its own build) is loaded through a code cache that also keeps the
// functions a run compiled, saved on the exit of the first run that runs a command. The sources (no build
// beside this file) load `cli-main.ts` as a module. See "Start-up time" in the README.
import { enableCompileCacheSafely } from "@x/core/private-files";
import { loadWithCodeCache } from "./code-cache.js";

const { existsSync } = process.getBuiltinModule("node:fs");
const { join } = process.getBuiltinModule("node:path");

const cacheDir = enableCompileCacheSafely();
const built = join(import.meta.dirname, "cli-main.cjs");
if (existsSync(built)) {
  // enableCompileCacheSafely() has just checked the directory it returns
  const script = loadWithCodeCache(built, cacheDir, { checkedDir: true });
  const { run } = script.exports as typeof import("./cli-main.js");
  run({ onCommand: () => process.once("exit", () => script.saveCache()) });
} else {
  import("./cli-main.js").then(({ run }) => run());
}
