// Runs as every package's `prepack`: refuses to pack or publish a package whose dist/ is missing, or older
// than a file of its src/ (tests aside), so no tarball ships without its build or with a stale one.
// Run `pnpm build` at the root (or in the package) first.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const packageDir = process.cwd();
const { name } = JSON.parse(readFileSync("package.json", "utf8"));

/** Every file below `dir`, with its modification time in ms. */
function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, mtimeMs: statSync(path).mtimeMs };
    });
}

function fail(message) {
  console.error(`prepack ${name}: ${message}; run \`pnpm build\` first`);
  process.exit(1);
}

let built;
try {
  built = files(join(packageDir, "dist"));
} catch {
  fail("dist/ is missing");
}
if (built.length === 0) fail("dist/ is empty");
const buildTime = Math.min(...built.map((file) => file.mtimeMs));
const sources = files(join(packageDir, "src")).filter((file) => !/\.test(-d)?\.ts$/.test(file.path));
const stale = sources.filter((file) => file.mtimeMs > buildTime);
if (stale.length > 0)
  fail(`dist/ is older than ${stale.map((file) => relative(packageDir, file.path)).join(", ")}`);
