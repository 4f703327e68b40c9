// better-sqlite3 is an optional peer dependency, loaded only by the first SqliteCache. Every check runs in
// a real child process, so no module cache of this test run can hide a load.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { installStandIn, packageCopy, runModuleChild } from "@x/test-support/package-copy";
import { describe, expect, it } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
/** A copy of @x/checkpoint installed with @x/core, but no better-sqlite3. */
const copyWithoutSqlite = () => packageCopy(packageDir, "@x/checkpoint", ["@x/core"]);
const loaded = `Object.keys(createRequire(process.cwd() + "/").cache).some((path) => path.includes("better-sqlite3"))`;

/** The error of `new SqliteCache(":memory:")` in a child run in `root`. */
async function sqliteCacheError(root: string): Promise<{ code: string; message: string }> {
  const result = await runModuleChild(
    root,
    `import { XError } from "@x/core";
     const { SqliteCache } = await import("@x/checkpoint");
     let outcome = "opened";
     try { new SqliteCache(":memory:"); }
     catch (error) { outcome = { code: XError.is(error) ? error.code : String(error), message: error.message }; }
     console.log(JSON.stringify({ outcome }));`,
  );
  return result.outcome as { code: string; message: string };
}

describe("loading better-sqlite3", () => {
  it("importing @x/checkpoint does not load it; the first SqliteCache does", async () => {
    const result = await runModuleChild(
      packageDir,
      `import { createRequire } from "node:module";
       const checkpoint = await import("@x/checkpoint");
       const afterImport = ${loaded};
       new checkpoint.Checkpoint("c", { dependencies: [new checkpoint.Dependency("d")], cache: new checkpoint.MemoryCache() });
       const afterCheckpoint = ${loaded};
       const cache = new checkpoint.SqliteCache(":memory:");
       cache.set("k", 1n);
       console.log(JSON.stringify({ afterImport, afterCheckpoint, afterSqlite: ${loaded}, value: String(cache.get("k")) }));`,
    );
    expect(result).toEqual({ afterImport: false, afterCheckpoint: false, afterSqlite: true, value: "1" });
  });

  it("without it, importing works and SqliteCache throws ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE saying to install it", async () => {
    const result = await runModuleChild(
      copyWithoutSqlite(),
      `import { XError } from "@x/core";
       const { Checkpoint, Dependency, MemoryCache, SqliteCache } = await import("@x/checkpoint");
       const cp = new Checkpoint("c", { dependencies: [new Dependency("d")], cache: new MemoryCache() });
       await cp.checkPulse(new Date(0), { offset: 1 });
       const attempts = [];
       for (let i = 0; i < 2; i++) {
         try { new SqliteCache(":memory:"); attempts.push("opened"); }
         catch (error) { attempts.push({ code: XError.is(error) ? error.code : String(error), message: error.message, cause: error.cause?.code }); }
       }
       console.log(JSON.stringify({ state: cp.state, attempts }));`,
    );
    expect(result.state).toEqual({ offset: 1 });
    const attempts = result.attempts as { code: string; message: string; cause: string }[];
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.code).toBe("ERR_X_CHECKPOINT_SQLITE_UNAVAILABLE");
      expect(attempt.message).toContain("npm install better-sqlite3");
      expect(attempt.cause).toBe("MODULE_NOT_FOUND");
    }
  });

  it.each([
    ["a major it does not support", "11.10.0", ">=14", ["^12.0.0 || ^13.0.0", "11.10.0 is installed"]],
    [
      "a version whose engines exclude this Node",
      "13.9.0",
      ">=999",
      [`better-sqlite3 13.9.0 needs Node >=999, and this is Node ${process.versions.node}`],
    ],
  ])("refuses %s before loading it, naming both versions", async (_, version, enginesNode, messages) => {
    const root = copyWithoutSqlite();
    installStandIn(root, "better-sqlite3", version, enginesNode);
    const error = await sqliteCacheError(root);
    expect(error.code).toBe("ERR_X_CHECKPOINT_SQLITE_VERSION");
    for (const message of messages) expect(error.message).toContain(message);
  });
});
