import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where `pnpm docs:build` writes the site. */
export const dist = fileURLToPath(new URL("../.vitepress/dist", import.meta.url));

if (!existsSync(`${dist}/index.html`)) throw new Error(`no built site in ${dist}: run pnpm docs:build first`);
