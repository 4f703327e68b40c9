import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { startSupervisor } from "@x/supervisor";

const dir = mkdtempSync("/tmp/zz-");
console.log(process.cwd());
const sup = await startSupervisor({ db: dir + "/s.db", fetchersDir: dir + "/f", socket: dir + "/s.sock" });
console.log(process.cwd());
try {
  createRequire("/work/main/packages/checkpoint/src/x.ts")(
    "/work/main/packages/checkpoint/node_modules/better-sqlite3/lib/database.js",
  );
  const r = createRequire("/work/main/packages/checkpoint/node_modules/better-sqlite3/lib/database.js");
  console.log(r.resolve("bindings"));
} catch (e) {
  console.log("ERR", (e as Error).message.split("\n")[0]);
}
await sup.close();
