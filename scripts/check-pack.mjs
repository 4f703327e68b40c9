// Packs every package as npm would publish it and checks the tarball: publint (scripts/pack/publint.mjs), @arethetypeswrong/cli
// (ESM-only profile), and its contents (dist/, LICENSE, README.md, CHANGELOG.md, nothing from tests or
// benchmarks, no relative link or image in the README to a file the tarball does not hold: the registry's
// page would show it dead). Exits non-zero when any package fails.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publintFailures } from "./pack/publint.mjs";
import { deadLinks } from "./pack/readme-links.mjs";

const root = new URL("..", import.meta.url).pathname;
const packagesDir = join(root, "packages");
const out = mkdtempSync(join(tmpdir(), "x-pack-"));
let failures = 0;
let dead = 0;

for (const name of readdirSync(packagesDir)) {
  const dir = join(packagesDir, name);
  try {
    execFileSync("pnpm", ["pack", "--pack-destination", out], { cwd: dir, stdio: "pipe" });
    const tarball = join(
      out,
      readdirSync(out).find((file) => file.startsWith(`x-${name}-`)),
    );
    checkContents(tarball);
    const lint = await publintFailures(tarball);
    for (const line of lint) console.error(`  publint: ${line}`);
    if (lint.length > 0) throw new Error(`publint found ${lint.length} problems`);
    quiet(["exec", "attw", tarball, "--profile", "esm-only"], dir);
    console.log(`check:pack ${name}: ok`);
  } catch (error) {
    failures++;
    console.error(`check:pack ${name}: FAILED (${error.message.split("\n")[0]})`);
  }
}
rmSync(out, { recursive: true, force: true });
console.log(`check:pack: ${dead} dead links or images in the packed READMEs`);

/** Throws unless the tarball holds what a user needs and nothing from tests or benchmarks. */
function checkContents(tarball) {
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ""));
  const missing = [
    "LICENSE",
    "README.md",
    "CHANGELOG.md",
    "package.json",
    "dist/index.js",
    "dist/index.d.ts",
  ].filter((path) => !files.includes(path));
  const unwanted = files.filter((path) =>
    /^(test|bench|examples)\/|\.test(-d)?\.ts$|(^|\/)fixtures\//.test(path),
  );
  if (missing.length > 0) throw new Error(`the tarball lacks ${missing.join(", ")}`);
  if (unwanted.length > 0) throw new Error(`the tarball holds ${unwanted.join(", ")}`);
  const license = execFileSync("tar", ["-xOzf", tarball, "package/LICENSE"], { encoding: "utf8" });
  if (license !== readFileSync(join(root, "LICENSE"), "utf8"))
    throw new Error("its LICENSE differs from the root's");
  const readme = execFileSync("tar", ["-xOzf", tarball, "package/README.md"], { encoding: "utf8" });
  const links = deadLinks(readme, files);
  dead += links.length;
  for (const { line, target } of links)
    console.error(`  README.md:${line}: ${target} is not in the tarball (link to the repository instead)`);
  if (links.length > 0) throw new Error(`its README has ${links.length} dead links or images`);
}

/** Runs a pnpm command; its output is shown only when it fails. */
function quiet(args, cwd) {
  try {
    execFileSync("pnpm", args, { cwd, stdio: "pipe", encoding: "utf8" });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ""}${error.stderr ?? ""}`);
    throw error;
  }
}
process.exit(failures === 0 ? 0 : 1);
