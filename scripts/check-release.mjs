// pnpm check:release: proves that every package installs and works alone from a registry. Starts a
// throwaway local registry (verdaccio), runs `changeset version` and `pnpm release` against it from a clean
// copy of the repository, then installs each package alone in an empty project, with npm and with pnpm,
// and checks that it imports, its commands answer --help, its declarations type-check under TypeScript 7
// and 5.9 (the oldest we support) with Node's own and a bundler's module resolution, and its README's first
// example runs as written. Exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkPackage, run } from "./release/consumer-checks.mjs";
import { compilerOf } from "./release/consumer-types.mjs";
import { cleanEnv, startLocalRegistry } from "./release/local-registry.mjs";

/**
 * The TypeScript majors whose consumers we support (root devDependencies: `typescript`, and the oldest as
 * `typescript-5`), and the Node types they compile against (the oldest Node line's). TypeScript 5 takes
 * five times as long as 7, so it skips `module: preserve`, which resolves the same declarations as `esnext`.
 */
const require = createRequire(import.meta.url);
const compilers = [
  compilerOf("typescript", require.resolve),
  compilerOf("typescript-5", require.resolve, ["nodenext", "bundler-esnext"]),
];
const nodeTypes = "22.20.5";

const root = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "x-check-release-"));
const verdaccio = join(dirname(require.resolve("verdaccio/package.json")), "bin", "verdaccio");
let registry;

/**
 * Drops `publishConfig.provenance` from the copy's packages: provenance is signed with the identity of a CI
 * provider (GitHub Actions, GitLab CI), which a local run has not, and npm refuses to publish without it.
 * Everything else is published exactly as a real release would publish it.
 */
function withoutProvenance(repo) {
  for (const dir of readdirSync(join(repo, "packages"))) {
    const path = join(repo, "packages", dir, "package.json");
    const manifest = JSON.parse(readFileSync(path, "utf8"));
    delete manifest.publishConfig?.provenance;
    writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
  }
}

async function cleanUp() {
  await registry?.stop();
  rmSync(work, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => cleanUp().finally(() => process.exit(130)));

let failed = 0;
try {
  registry = await startLocalRegistry(join(work, "registry"), verdaccio);
  console.log(`check:release: local registry at ${registry.url}`);
  const env = {
    ...cleanEnv(),
    npm_config_registry: registry.url,
    NPM_CONFIG_USERCONFIG: registry.npmrc,
  };

  // A clean copy of the working tree, released as a maintainer would release it.
  const repo = join(work, "repo");
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    try {
      cpSync(join(root, file), join(repo, file), { recursive: true });
    } catch (error) {
      if (error.code !== "ENOENT") throw error; // deleted but not yet staged
    }
  }
  run("pnpm", ["install", "--frozen-lockfile", "--prefer-offline", "--reporter=silent"], {
    cwd: repo,
    env: cleanEnv(),
  });
  run("pnpm", ["exec", "changeset", "version"], { cwd: repo, env: cleanEnv() });
  withoutProvenance(repo);
  // changeset publish tags each release in git, as the maintainer's checkout would be.
  const git = ["-c", "user.name=check-release", "-c", "user.email=check-release@localhost"];
  run("git", ["init", "-q"], { cwd: repo });
  run("git", ["add", "-A"], { cwd: repo });
  run("git", [...git, "commit", "-q", "-m", "Version packages"], { cwd: repo });
  run("pnpm", ["release"], { cwd: repo, env });
  console.log("check:release: published every package to the local registry");

  const consumers = join(work, "consumers");
  mkdirSync(consumers, { recursive: true });
  // what a TypeScript user adds, as the READMEs say: once, in the directory above every consumer project
  run("npm", ["install", `@types/node@${nodeTypes}`, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: consumers,
    env,
  });

  for (const dir of readdirSync(join(repo, "packages")).sort()) {
    const { name, version } = JSON.parse(readFileSync(join(repo, "packages", dir, "package.json"), "utf8"));
    const results = await checkPackage({ name, version, work: consumers, compilers, env });
    const line = results.map(([label, error]) => `${label} ${error ? "✗" : "✓"}`).join(", ");
    console.log(`check:release ${name}@${version}: ${line}`);
    for (const [label, error] of results.filter(([, error]) => error)) {
      failed++;
      console.error(`  ${label}: ${error.message.replaceAll("\n", "\n    ")}`);
    }
  }
  console.log(
    `check:release: ${compilers.map((compiler) => compiler.name).join(" and ")} for the type checks`,
  );
} catch (error) {
  failed++;
  console.error(`check:release: ${error.message}`);
} finally {
  await cleanUp();
}
process.exit(failed === 0 ? 0 : 1);
