// A scratch project that depends on the built @x packages by name, as a user's project would.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

/**
 * Third-party packages that examples use beside ours, installed at the repository root for the docs only:
 * Node's types, and the libraries of recipes (KafkaJS, prom-client), so that those type-check against the
 * real declarations.
 */
const DOCS_ONLY = ["@types/node", "kafkajs", "prom-client"];

/** The workspace's publishable packages: `{ name, dir, manifest }`. */
function workspacePackages() {
  const packagesDir = join(root, "packages");
  return readdirSync(packagesDir)
    .map((entry) => join(packagesDir, entry))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => !manifest.private)
    .map(({ dir, manifest }) => ({ name: manifest.name, dir, manifest }));
}

/** Links `target` as `node_modules/<name>` of `project` unless something by that name is there already. */
function link(project, name, target) {
  const path = join(project, "node_modules", name);
  if (existsSync(path)) return;
  mkdirSync(join(path, ".."), { recursive: true });
  symlinkSync(target, path);
}

/**
 * Creates the scratch project: `node_modules/@x/*` link to the built packages, their own dependencies (and
 * the drivers they accept as optional peers) are installed beside them as a user's `npm install` would,
 * `@types/node` is present, and `node_modules/.bin` holds the packages' commands.
 *
 * @returns the project's directory
 */
export function createScratchProject() {
  const project = mkdtempSync(join(tmpdir(), "x-check-docs-"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "docs", private: true, type: "module" }),
  );
  const packages = workspacePackages();
  for (const { name, dir } of packages) link(project, name, dir);
  for (const { dir } of packages) {
    const modules = join(dir, "node_modules");
    if (!existsSync(modules)) continue;
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith(".") || entry === "@x") continue;
      const names = entry.startsWith("@")
        ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`)
        : [entry];
      for (const name of names) link(project, name, join(modules, name));
    }
  }
  for (const name of DOCS_ONLY) link(project, name, join(root, "node_modules", name));
  const bin = join(project, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  for (const { dir, manifest } of packages)
    for (const [command, file] of Object.entries(manifest.bin ?? {}))
      writeFileSync(join(bin, command), `#!/bin/sh\nexec "${process.execPath}" "${join(dir, file)}" "$@"\n`, {
        mode: 0o755,
      });
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: "nodenext",
        target: "es2023",
        lib: ["es2024"],
        types: ["node"],
        noEmit: true,
        skipLibCheck: true,
      },
      include: ["blocks/*.ts"],
    }),
  );
  mkdirSync(join(project, "blocks"));
  return project;
}
