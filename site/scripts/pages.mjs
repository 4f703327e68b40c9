// Which Markdown files of the repository become which pages of the site, and how their links are rewritten
// on the way: the files stay as they are (their links work on GitHub and on the npm registry's page), the
// site gets copies whose links point at its own pages, and at GitHub for files the site does not carry.
import { existsSync, globSync, readFileSync } from "node:fs";
import { join, posix, resolve } from "node:path";

/** The repository's root. */
export const root = resolve(import.meta.dirname, "../..");
/** Where the generated Markdown sources of the site go (gitignored). */
export const content = resolve(import.meta.dirname, "../content");
/** The repository on GitHub: links to files the site does not carry go there. */
export const repository = "https://github.com/x-toolkit/x";

/** Repository URLs that name a file of this repository: `blob`/`tree` pages and raw files, on `main`. */
const REPOSITORY_URL =
  /^https:\/\/(?:github\.com\/x-toolkit\/x\/(?:blob|tree)\/main|raw\.githubusercontent\.com\/x-toolkit\/x\/main)\/([^#?]*)(#.*)?$/;
/** The repository's home page, with an optional `#readme` fragment: the site's home page. */
const REPOSITORY_HOME = /^https:\/\/github\.com\/x-toolkit\/x\/?(#readme)?$/;

/**
 * Every page copied from the repository: `{ source, page }`, both relative to their roots (the repository,
 * and `content/`), in the order the navigation lists them.
 */
export function copiedPages() {
  const packages = globSync("packages/*/README.md", { cwd: root }).sort();
  const docs = globSync("docs/**/*.md", { cwd: root }).sort();
  return [
    { source: "README.md", page: "index.md" },
    ...packages.map((source) => ({ source, page: `packages/${source.split("/")[1]}.md` })),
    ...docs.map((source) => ({ source, page: source })),
  ];
}

/** Pictures the pages show: copied beside the pages at the same paths. */
export function pictures() {
  return globSync("docs/pictures/*", { cwd: root }).sort();
}

/**
 * `markdown` with `prose(line, done)` applied to each line outside fenced code blocks, where `done` is the
 * array of the lines already output (`prose` may change its last line and return `undefined` to drop `line`).
 */
function mapProse(markdown, prose) {
  const done = [];
  let fence;
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker) fence = marker;
    else if (fence !== undefined && marker?.[0] === fence[0] && marker.length >= fence.length)
      fence = undefined;
    const output = fence !== undefined || marker ? line : prose(line, done);
    if (output !== undefined) done.push(output);
  }
  return done.join("\n");
}

/**
 * `markdown` of the repository file `source`, published as the page `page`, with every link and image
 * outside code rewritten for the site by {@link rewriteTarget}.
 */
export function rewriteLinks(markdown, source, page, pagesBySource) {
  // Inline code spans are left alone; links are `](target)`, with an optional title.
  return mapProse(markdown, (line) =>
    line
      .split(/(`+[^`]*`+)/)
      .map((part, index) =>
        index % 2 === 1
          ? part
          : part.replace(
              /\]\(([^)\s]+)(\s+"[^"]*")?\)/g,
              (_, target, title = "") => `](${rewriteTarget(target, source, page, pagesBySource)}${title})`,
            ),
      )
      .join(""),
  );
}

/**
 * `markdown` with each line that starts with `<` inside a code span opened on the line above joined to that
 * line: on the site such a line would open a Vue component. A line break in a code span is a space, so the
 * page reads the same.
 */
export function joinSplitCodeSpans(markdown) {
  return mapProse(markdown, (line, done) => {
    const previous = done.at(-1);
    if (previous === undefined || !line.startsWith("<") || (previous.match(/`/g)?.length ?? 0) % 2 === 0)
      return line;
    done[done.length - 1] = `${previous} ${line}`;
    return undefined;
  });
}

/**
 * Where a link of `source` should point from `page`: a relative link to a page or picture of the site when
 * the target is one (whether written as a relative path or as a URL of the repository), the file on GitHub
 * for any other file of the repository, and the target unchanged otherwise (other sites, `#anchor`s).
 * Throws on a relative link to a file the repository does not have.
 */
export function rewriteTarget(target, source, page, pagesBySource) {
  if (REPOSITORY_HOME.test(target)) return relativeLink(page, "index.md", "");
  let path;
  let fragment = "";
  const url = REPOSITORY_URL.exec(target);
  if (url) {
    path = url[1].replace(/\/$/, "");
    fragment = url[2] ?? "";
  } else if (/^[a-z][a-z+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("/")) {
    return target;
  } else {
    const hash = target.indexOf("#");
    path = posix.normalize(posix.join(posix.dirname(source), hash < 0 ? target : target.slice(0, hash)));
    fragment = hash < 0 ? "" : target.slice(hash);
    if (!existsSync(join(root, path)))
      throw new Error(`${source}: the link ${target} names ${path}, which the repository does not have`);
  }
  if (path.startsWith("packages/") && !path.includes("/", "packages/".length) && fragment === "#readme")
    path = `${path}/README.md`;
  const sitePage = pagesBySource.get(path);
  if (sitePage !== undefined) return relativeLink(page, sitePage, fragment === "#readme" ? "" : fragment);
  if (path.startsWith("docs/pictures/")) return relativeLink(page, path, "");
  if (url) return target;
  return `${repository}/blob/main/${path}${fragment}`;
}

/** A relative link from the page `from` to the page or file `to` (both relative to `content/`). */
function relativeLink(from, to, fragment) {
  const link = posix.relative(posix.dirname(from), to);
  return `${link.startsWith(".") ? link : `./${link}`}${fragment}`;
}

/** The text of the first `# ` heading of a Markdown file of the repository, without Markdown code marks. */
export function title(source) {
  const heading = /^# (.+)$/m.exec(readFileSync(join(root, source), "utf8"))?.[1] ?? source;
  return heading.replace(/`/g, "").trim();
}
