// better-sqlite3 is an optional peer dependency, loaded only by the first SqliteCache.
// Both checks run in real child processes, so no module cache of this test run can hide a load.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const cleanup: string[] = [];

afterEach(() => {
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs an ES module script in a child Node (TypeScript sources through tsx) and parses its JSON output.
 * `NODE_PATH` is dropped: `pnpm exec` points it at the store's hoisted packages, which a user's install lacks.
 */
function runChild(cwd: string, script: string): Promise<Record<string, unknown>> {
  const args = ["--conditions=@x/source", "--import", tsx, "--input-type=module", "-e", script];
  const { NODE_PATH: _, ...env } = process.env;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

/**
 * A copy of the package sources whose node_modules has @x/core and zod, but no better-sqlite3; removed
 * after the test.
 */
function packageCopy(): string {
  const root = mkdtempSync(join(tmpdir(), "x-checkpoint-sqlite-"));
  cleanup.push(root);
  cpSync(join(packageDir, "src"), join(root, "src"), { recursive: true });
  writeFileSync(
    join(root, "package.json"),
    JSON.stringify({ name: "@x/checkpoint", type: "module", exports: { ".": "./src/index.ts" } }),
  );
  mkdirSync(join(root, "node_modules", "@x"), { recursive: true });
  symlinkSync(
    realpathSync(join(packageDir, "node_modules", "@x", "core")),
    join(root, "node_modules", "@x", "core"),
  );
  symlinkSync(realpathSync(join(packageDir, "node_modules", "zod")), join(root, "node_modules", "zod"));
  return root;
}

/**
 * Installs a stand-in better-sqlite3 of `version` (and `engines.node`) into a package copy. Loading it
 * would print "loaded" to stdout and break the child's JSON output, so a test also proves it was never loaded.
 */
function installDriver(root: string, version: string, enginesNode?: string): void {
  const dir = join(root, "node_modules", "better-sqlite3");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "better-sqlite3", version, main: "index.js", engines: { node: enginesNode } }),
  );
  writeFileSync(join(dir, "index.js"), 'console.log("loaded"); module.exports = function Database() {};');
}

/** The error of `new SqliteCache(":memory:")` in a child run in `root`. */
async function sqliteCacheError(root: string): Promise<{ code: string; message: string }> {
  const result = await runChild(
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

const loaded = `Object.keys(createRequire(process.cwd() + "/").cache).some((path) => path.includes("better-sqlite3"))`;

describe("loading better-sqlite3", () => {
  it("importing @x/checkpoint does not load it; the first SqliteCache does", async () => {
    const result = await runChild(
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
    const root = packageCopy();
    const result = await runChild(
      root,
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
    const root = packageCopy();
    installDriver(root, version, enginesNode);
    const error = await sqliteCacheError(root);
    expect(error.code).toBe("ERR_X_CHECKPOINT_SQLITE_VERSION");
    for (const message of messages) expect(error.message).toContain(message);
  });
});
