// The first code example of a README, and the install commands of its first shell block.
import { readFileSync } from "node:fs";

/** The fenced blocks of a Markdown file: `{ info, code }`, in order. */
function fencedBlocks(markdown) {
  return [...markdown.matchAll(/^```(\S*)[^\n]*\n([\s\S]*?)^```\s*$/gm)].map(([, info, code]) => ({
    info,
    code,
  }));
}

/**
 * The README's first TypeScript or JavaScript block, with the file extension to run it under, and the
 * `npm install` lines of its first shell block (comments dropped).
 */
export function readmeExample(readmePath) {
  const blocks = fencedBlocks(readFileSync(readmePath, "utf8"));
  const example = blocks.find((block) => /^(ts|typescript|js|javascript|mjs)$/.test(block.info));
  const shell = blocks.find((block) => /^(sh|bash|shell)$/.test(block.info));
  const installs = (shell?.code ?? "")
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => /^npm install /.test(line));
  return {
    code: example?.code,
    extension: example && /^(ts|typescript)$/.test(example.info) ? ".mts" : ".mjs",
    installs,
  };
}
