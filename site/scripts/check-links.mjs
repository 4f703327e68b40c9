// `node scripts/check-links.mjs [dir]`: every link and picture of the built site (default .vitepress/dist)
// that stays on the site must name a file that exists and, with a `#anchor`, an element of that page with
// that id. VitePress finds links to missing pages while it builds, but not anchors that a page lacks.
import { existsSync, globSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { pathToFileURL } from "node:url";

/** Attributes whose value is a link to follow: `href` of `<a>` and `<link>`, `src` of pictures and scripts. */
const LINK = /\s(?:href|src)="([^"]*)"/g;
const ID = /\sid="([^"]*)"/g;

/** Decodes the entities that VitePress writes into attribute values. */
function unescapeAttribute(value) {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/**
 * The broken links of the site built into `dir`, one `"page: link (reason)"` string each; `[]` when every
 * link resolves. Links to other sites and `javascript:`/`mailto:` links are not followed.
 */
export function brokenLinks(dir) {
  const pages = globSync("**/*.html", { cwd: dir }).map((page) => page.split("\\").join("/"));
  const ids = new Map();
  /** The ids of the page at `path` (relative to `dir`), read once. */
  const idsOf = (path) => {
    if (!ids.has(path)) {
      const html = readFileSync(join(dir, path), "utf8");
      ids.set(path, new Set([...html.matchAll(ID)].map(([, id]) => unescapeAttribute(id))));
    }
    return ids.get(path);
  };
  const problems = [];
  for (const page of pages.sort()) {
    const html = readFileSync(join(dir, page), "utf8");
    for (const [, raw] of html.matchAll(LINK)) {
      const link = unescapeAttribute(raw);
      if (link === "" || /^[a-z][a-z+.-]*:/i.test(link) || link.startsWith("//")) continue;
      const hash = link.indexOf("#");
      const path = (hash < 0 ? link : link.slice(0, hash)).replace(/\?.*$/, "");
      const fragment = hash < 0 ? "" : decodeURIComponent(link.slice(hash + 1));
      let target =
        path === ""
          ? page
          : decodeURIComponent(posix.join(path.startsWith("/") ? "" : posix.dirname(page), path));
      target = posix.normalize(target).replace(/^\/+/, "");
      if (target === "" || target.endsWith("/")) target += "index.html";
      if (!existsSync(join(dir, target)) && existsSync(join(dir, `${target}.html`))) target += ".html";
      if (!existsSync(join(dir, target)) || statSync(join(dir, target)).isDirectory()) {
        problems.push(`${page}: ${link} (no file ${target})`);
        continue;
      }
      if (fragment !== "" && target.endsWith(".html") && !idsOf(target).has(fragment))
        problems.push(`${page}: ${link} (${target} has no element with id "${fragment}")`);
    }
  }
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dir = process.argv[2] ?? join(import.meta.dirname, "../.vitepress/dist");
  const problems = brokenLinks(dir);
  for (const problem of problems) console.error(`broken link: ${problem}`);
  console.log(
    problems.length === 0 ? "links: every link and anchor resolves" : `links: ${problems.length} broken`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
