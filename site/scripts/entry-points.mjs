// The public entry points of every package: one per subpath of its package.json `exports` that has source.
import { globSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./pages.mjs";

/**
 * `{ specifier, file }` for every entry point a user can import, in package order: `specifier` as a user
 * writes it (`@x/checkpoint/redis`), `file` the TypeScript source behind it (the `@x/source` condition),
 * relative to the repository's root.
 */
export function entryPoints() {
  return globSync("packages/*/package.json", { cwd: root })
    .sort()
    .flatMap((manifest) => {
      const { name, exports } = JSON.parse(readFileSync(join(root, manifest), "utf8"));
      const directory = manifest.slice(0, -"/package.json".length);
      return Object.entries(exports)
        .filter(([, target]) => typeof target === "object" && target["@x/source"])
        .map(([subpath, target]) => ({
          specifier: subpath === "." ? name : `${name}/${subpath.slice(2)}`,
          file: join(directory, target["@x/source"]),
        }));
    });
}
