// Heading anchors as GitHub and the npm registry make them, so the READMEs' `#anchor` links work on the site.

/**
 * The anchor of a heading whose text is `text`, as GitHub makes it: lower case, every character but letters,
 * digits, `_`, `-` and spaces dropped, each space a `-` (`` `run(fn)` and limits `` → `runfn-and-limits`).
 * Repeated headings get `-1`, `-2`… from the Markdown renderer, as on GitHub.
 */
export function githubSlug(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}
