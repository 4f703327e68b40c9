// The first code example of a README, and the install commands of its first shell block.
import { readFileSync } from "node:fs";
import { fencedBlocks } from "../docs/fenced-blocks.mjs";

/**
 * The README's first TypeScript or JavaScript block, with the file extension to run it under, and the
 * `npm install` lines of its first shell block (comments dropped).
 */
export function readmeExample(readmePath) {
  const blocks = fencedBlocks(readFileSync(readmePath, "utf8"));
  const example = blocks.find((block) => block.kind === "ts" || block.kind === "js");
  const shell = blocks.find((block) => block.kind === "sh");
  const installs = (shell?.code ?? "")
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => /^npm install /.test(line));
  return {
    code: example?.code,
    extension: example?.kind === "ts" ? ".mts" : ".mjs",
    installs,
  };
}
