// Decision 9: better-sqlite3 is an optional peer dependency, loaded only by the first SqliteCache.
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
    // A copy of the package sources whose node_modules has @x/core and zod, but no better-sqlite3.
    const root = mkdtempSync(join(tmpdir(), "x-checkpoint-no-sqlite-"));
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
});
