// `pnpm docs:build`: the site from scratch into .vitepress/dist: content/ (scripts/prepare.mjs), VitePress
// (which fails on a link to a missing page), then every link and `#anchor` of the output (check-links.mjs).
import { spawnSync } from "node:child_process";
import { join } from "node:path";

const site = join(import.meta.dirname, "..");
const steps = [
  ["node", [join(site, "scripts/prepare.mjs")]],
  [join(site, "node_modules/.bin/vitepress"), ["build", site]],
  ["node", [join(site, "scripts/check-links.mjs")]],
];
for (const [command, args] of steps) {
  const started = performance.now();
  const step = spawnSync(command, args, { cwd: site, stdio: "inherit" });
  console.log(
    `docs:build: ${args[0].split("/").pop()} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  if (step.status !== 0) process.exit(step.status ?? 1);
}
