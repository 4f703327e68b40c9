import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { onTestFinished } from "vitest";

/**
 * A copy of a package's TypeScript sources in a temporary directory, installed with only `dependencies` (symlinked
 * from the package's own node_modules), as a user who did not install the others would have it. Removed when the
 * current test finishes.
 */
export function packageCopy(packageDir: string, name: string, dependencies: readonly string[]): string {
  const root = mkdtempSync(join(tmpdir(), "x-package-copy-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  cpSync(join(packageDir, "src"), join(root, "src"), { recursive: true });
  writeFileSync(
    join(root, "package.json"),
    JSON.stringify({ name, type: "module", exports: { ".": "./src/index.ts" } }),
  );
  for (const dependency of dependencies) {
    const target = join(root, "node_modules", dependency);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(realpathSync(join(packageDir, "node_modules", dependency)), target);
  }
  return root;
}

/**
 * Installs a stand-in package of `version` (and `engines.node`) into a package copy. Loading it prints "loaded"
 * to stdout, which breaks a child's JSON output: a test that parses that output also proves it never loaded.
 */
export function installStandIn(root: string, name: string, version: string, enginesNode?: string): void {
  const dir = join(root, "node_modules", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name, version, main: "index.js", engines: { node: enginesNode } }),
  );
  writeFileSync(join(dir, "index.js"), 'console.log("loaded"); module.exports = function StandIn() {};');
}

const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * Runs an ES module script in a child Node in `cwd` (TypeScript sources through tsx, the `@x/source`
 * condition on) and parses its JSON output. `NODE_PATH` is dropped: `pnpm exec` points it at the store's
 * hoisted packages, which a user's install lacks.
 */
export function runModuleChild(cwd: string, script: string): Promise<Record<string, unknown>> {
  const args = ["--conditions=@x/source", "--import", tsx, "--input-type=module", "-e", script];
  const { NODE_PATH: _, ...env } = process.env;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}
