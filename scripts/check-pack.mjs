// Packs every package as npm would publish it and checks the tarball with publint and
// @arethetypeswrong/cli (ESM-only profile). Exits non-zero when any package fails.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const packagesDir = join(root, "packages");
const out = mkdtempSync(join(tmpdir(), "x-pack-"));
let failures = 0;

for (const name of readdirSync(packagesDir)) {
  const dir = join(packagesDir, name);
  try {
    execFileSync("pnpm", ["pack", "--pack-destination", out], { cwd: dir, stdio: "pipe" });
    const tarball = join(
      out,
      readdirSync(out).find((file) => file.startsWith(`x-${name}-`)),
    );
    quiet(["exec", "publint", "run", tarball, "--strict"], dir);
    quiet(["exec", "attw", tarball, "--profile", "esm-only"], dir);
    console.log(`check:pack ${name}: ok`);
  } catch (error) {
    failures++;
    console.error(`check:pack ${name}: FAILED (${error.message.split("\n")[0]})`);
  }
}
rmSync(out, { recursive: true, force: true });

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
