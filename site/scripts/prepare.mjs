// `node scripts/prepare.mjs`: lays out content/, the site's Markdown sources, anew: copies of the README
// files and docs/ with their links rewritten for the site (./pages.mjs), the pictures, and the API reference
// that TypeDoc writes from the packages' TSDoc (typedoc.config.mjs). Exits non-zero on an export without a doc
// comment, a broken `{@link}`, or a link of a page to a file the repository lacks. Arguments go to TypeDoc.
import { spawnSync } from "node:child_process";
import { copyFileSync, globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { entryPoints } from "./entry-points.mjs";
import { content, copiedPages, joinSplitCodeSpans, pictures, rewriteLinks, root } from "./pages.mjs";
import { undocumentedExports } from "./undocumented.mjs";

rmSync(content, { recursive: true, force: true });
const pages = copiedPages();
const pagesBySource = new Map(pages.map(({ source, page }) => [source, page]));
for (const { source, page } of pages) {
  const markdown = readFileSync(join(root, source), "utf8");
  write(page, joinSplitCodeSpans(rewriteLinks(markdown, source, page, pagesBySource)));
}
for (const picture of pictures()) {
  mkdirSync(dirname(join(content, picture)), { recursive: true });
  copyFileSync(join(root, picture), join(content, picture));
}

const undocumented = undocumentedExports(
  entryPoints().map(({ file }) => join(root, file)),
  join(import.meta.dirname, "../tsconfig.typedoc.json"),
);
for (const missing of undocumented) console.error(`no doc comment: ${missing}`);
if (undocumented.length > 0) process.exit(1);

const typedoc = spawnSync(join(import.meta.dirname, "../node_modules/.bin/typedoc"), process.argv.slice(2), {
  cwd: join(import.meta.dirname, ".."),
  stdio: "inherit",
});
if (typedoc.status !== 0) {
  console.error(
    "prepare: TypeDoc failed. A {@link} to a name the entry point does not export cannot be followed by users" +
      " either: link an exported name, or write the name in backticks.",
  );
  process.exit(typedoc.status ?? 1);
}
for (const page of globSync("api/**/*.md", { cwd: content })) {
  write(page, joinSplitCodeSpans(readFileSync(join(content, page), "utf8")));
}

/** Writes `text` to the page `page` of content/. */
function write(page, text) {
  mkdirSync(dirname(join(content, page)), { recursive: true });
  writeFileSync(join(content, page), text);
}
