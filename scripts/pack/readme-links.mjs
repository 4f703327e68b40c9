// The links and images of a packed README that the registry's page cannot follow: relative ones to files the
// tarball does not hold.
import { posix } from "node:path";

/**
 * Every link and image target of `markdown` outside code: `[text](target)`, `![alt](target)`, reference
 * definitions `[id]: target`, and HTML `href="…"` and `src="…"`. Returns `{ line, target }` objects.
 */
export function linkTargets(markdown) {
  // code is blanked out, line breaks kept, so that a link's text may span lines and line numbers stay right
  let fence;
  const prose = markdown
    .split("\n")
    .map((text) => {
      const mark = /^ {0,3}(`{3,}|~{3,})/.exec(text)?.[1];
      if (mark && (fence === undefined || (mark[0] === fence[0] && mark.length >= fence.length))) {
        fence = fence === undefined ? mark : undefined;
        return "";
      }
      return fence === undefined ? text.replace(/(`+)[^`]*?\1/g, "") : "";
    })
    .join("\n");
  const patterns = [
    /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:[ \t]*<?(\S+?)>?(?=\s|$)/gm,
    /\b(?:href|src)\s*=\s*["']([^"']+)["']/g,
  ];
  const lineOf = (index) => prose.slice(0, index).split("\n").length;
  return patterns
    .flatMap((pattern) => [...prose.matchAll(pattern)].map((m) => ({ line: lineOf(m.index), target: m[1] })))
    .sort((a, b) => a.line - b.line);
}

/** Whether a link target leaves the package: a URL with a scheme, a protocol-relative URL, or an anchor. */
const isExternal = (target) => /^([a-z][a-z0-9+.-]*:|\/\/|#)/i.test(target);

/**
 * The relative links and images of a README at the root of a tarball whose files are `files` (paths relative
 * to the package's root) that point to nothing in it: `{ line, target }` objects. The registry renders the
 * README apart from the repository, so such a link is dead there (and an image is missing).
 */
export function deadLinks(markdown, files) {
  const shipped = new Set(files);
  const isShipped = (path) => shipped.has(path) || files.some((file) => file.startsWith(`${path}/`));
  return linkTargets(markdown).filter(({ target }) => {
    if (isExternal(target)) return false;
    const path = posix.normalize(decodeURIComponent(target.replace(/[?#].*$/, ""))).replace(/\/$/, "");
    return path.startsWith("../") || path.startsWith("/") || path === ".." || !isShipped(path);
  });
}
