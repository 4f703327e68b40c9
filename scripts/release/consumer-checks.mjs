// The checks of one published package, each in an empty project of its own, as a user would install it.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installSection, typeCheckConsumer } from "./consumer-types.mjs";
import { readmeExample } from "./readme-example.mjs";

/** Runs a command; its output is kept for the failure message only. */
export function run(command, args, options) {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: "pipe", timeout: 300_000, ...options });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim().split("\n").slice(-15).join("\n");
    throw new Error(`${command} ${args.join(" ")} failed:\n${output}`);
  }
}

/** An empty ESM project in `dir`. */
function emptyProject(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  return dir;
}

/** Every file below `dir` whose name says it is a native module or its build recipe. */
function nativeFiles(dir) {
  return readdirSync(dir, { recursive: true }).filter((path) => /\.node$|(^|\/)binding\.gyp$/.test(path));
}

/** The entry points a user imports: `name`, plus every subpath of its exports map but `./package.json`. */
function entryPoints(manifest) {
  return Object.keys(manifest.exports ?? { ".": null })
    .filter((key) => key !== "./package.json")
    .map((key) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`));
}

/**
 * Checks one package published as `name@version`, in projects below `work`, whose own `node_modules` has
 * `@types/node` for the type check, which runs each of `compilers` (see consumer-types.mjs); `env` points
 * npm and pnpm at the local registry. Resolves to `[check, error | undefined]` pairs in order; a
 * failed install skips the checks that need it.
 */
export async function checkPackage({ name, version, work, compilers, env }) {
  const results = [];
  const check = async (label, body) => {
    const result = [label, undefined];
    results.push(result); // in the order the checks start, whichever ends first
    try {
      await body();
      return true;
    } catch (error) {
      result[1] = error;
      return false;
    }
  };
  const slug = name.replace(/^@x\//, "");
  const npmDir = emptyProject(join(work, `${slug}-npm`));
  const pnpmDir = emptyProject(join(work, `${slug}-pnpm`));
  const spec = `${name}@${version}`;

  const npmInstalled = await check("installed alone with npm", () => {
    run("npm", ["install", spec, "--no-audit", "--no-fund", "--loglevel=error"], { cwd: npmDir, env });
    const modules = join(npmDir, "node_modules");
    if (name === "@x/process-guard" && nativeFiles(modules).length > 0)
      throw new Error(`installed native modules: ${nativeFiles(modules).join(", ")}`);
    if (name === "@x/checkpoint" && existsSync(join(modules, "better-sqlite3")))
      throw new Error("installed better-sqlite3, an optional peer");
  });
  const pnpmInstalled = await check("with pnpm", () => {
    run("pnpm", ["add", spec, "--reporter=silent"], { cwd: pnpmDir, env });
  });
  if (!npmInstalled || !pnpmInstalled) return results;

  const manifest = JSON.parse(readFileSync(join(npmDir, "node_modules", name, "package.json"), "utf8"));
  const entries = entryPoints(manifest);
  await check("import", () => {
    for (const dir of [npmDir, pnpmDir])
      for (const entry of entries)
        run(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(entry)})`], {
          cwd: dir,
          env,
        });
  });
  await check("CLIs", () => {
    for (const bin of Object.keys(manifest.bin ?? {})) {
      const help = run(join(npmDir, "node_modules", ".bin", bin), ["--help"], { cwd: npmDir, env });
      if (!/usage/i.test(help)) throw new Error(`${bin} --help printed no usage: ${help.slice(0, 200)}`);
    }
    // x-guard runs commands from a build of its own (cli-main.cjs, @x/core inside) through a code cache it
    // saves after the first command: run two through each install, the second from the cache
    if (name === "@x/process-guard")
      for (const dir of [npmDir, pnpmDir]) {
        const cacheEnv = { ...env, NODE_COMPILE_CACHE: join(dir, "compile-cache") };
        for (let i = 0; i < 2; i++)
          run(join(dir, "node_modules", ".bin", "x-guard"), ["10", process.execPath, "-e", "0"], {
            cwd: dir,
            env: cacheEnv,
          });
        const saved = readdirSync(cacheEnv.NODE_COMPILE_CACHE, { recursive: true }).filter((file) =>
          String(file).endsWith(".v8-code-cache"),
        );
        if (saved.length !== 1) throw new Error(`x-guard saved ${saved.length} code caches, expected 1`);
      }
  });
  // in the pnpm project while the README example runs in the npm one: its compilers run in child processes
  const types = check("types", () => {
    const install = installSection(readFileSync(join(pnpmDir, "node_modules", name, "README.md"), "utf8"));
    if (!install.includes("@types/node"))
      throw new Error("the README's Install section does not tell TypeScript users to add @types/node");
    return typeCheckConsumer({ dir: pnpmDir, entries, compilers, env });
  });
  await check("README example", () => {
    const example = readmeExample(join(npmDir, "node_modules", name, "README.md"));
    if (!example.code) throw new Error("the README has no TypeScript or JavaScript example");
    for (const install of example.installs)
      run("npm", [...install.split(/\s+/).slice(1), "--no-audit", "--no-fund", "--loglevel=error"], {
        cwd: npmDir,
        env,
      });
    const file = `readme-example${example.extension}`;
    writeFileSync(join(npmDir, file), example.code);
    // rmq-storage's example declares a topology of its own prefix and deletes it at its end
    run(process.execPath, [file], { cwd: npmDir, env, timeout: 120_000 });
  });
  await types;
  return results;
}
