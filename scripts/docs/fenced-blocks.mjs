// The fenced code blocks of a Markdown file, with their marks and the hidden prelude above them.

/** Language names of an info string's first word, by the kind of code they hold. */
const LANGUAGES = {
  ts: "ts",
  typescript: "ts",
  js: "js",
  javascript: "js",
  mjs: "js",
  sh: "sh",
  bash: "sh",
  shell: "sh",
};

/**
 * The fenced blocks of `markdown`, in order: `{ line, info, language, kind, marks, reason, prelude, code }`.
 *
 * - `line` is the 1-based line of the opening fence; `info` the whole info string; `language` its first word.
 * - `kind` is `"ts"`, `"js"`, `"sh"`, or `undefined` for a language that is not checked.
 * - `marks`: `"run"` (no mark), `"partial"` (a fragment), or `"norun"` (complete, cannot run here; `reason`
 *   says why: the info word `norun=<reason>`).
 * - `prelude` is the text of an HTML comment `<!-- prelude … -->` directly above the fence (blank lines
 *   allowed between), or `""`.
 */
export function fencedBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^( *)(`{3,}|~{3,})\s*(.*)$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body = [];
    let end = index + 1;
    const close = new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    for (; end < lines.length && !close.test(lines[end]); end++) body.push(lines[end]);
    const words = info.trim().split(/\s+/).filter(Boolean);
    const language = (words[0] ?? "").toLowerCase();
    const norun = words.find((word) => word.startsWith("norun="));
    blocks.push({
      line: index + 1,
      info: info.trim(),
      language,
      kind: LANGUAGES[language],
      marks: words.includes("partial") ? "partial" : norun ? "norun" : "run",
      reason: norun?.slice("norun=".length),
      prelude: preludeAbove(lines, index),
      code: body.map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join("\n"),
    });
    index = end;
  }
  return blocks;
}

/** The text of a `<!-- prelude … -->` comment ending directly above line `index`, or `""`. */
function preludeAbove(lines, index) {
  let end = index - 1;
  while (end >= 0 && lines[end].trim() === "") end--;
  if (end < 0 || !lines[end].trim().endsWith("-->")) return "";
  let start = end;
  while (start >= 0 && !lines[start].includes("<!--")) start--;
  if (start < 0) return "";
  const comment = lines.slice(start, end + 1).join("\n");
  const match = /<!--\s*prelude\b([\s\S]*?)-->/.exec(comment);
  return match ? match[1].replace(/^\n/, "") : "";
}
