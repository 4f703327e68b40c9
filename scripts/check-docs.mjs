// `pnpm check:docs [files…]`: every TypeScript, JavaScript and shell block of the READMEs and docs/ is
// checked as a user would meet it. Unmarked blocks are type-checked (TypeScript) and run against the built
// packages in a scratch project; blocks marked `partial` or `norun=<reason>` are only type-checked
// (TypeScript) or syntax-checked (JavaScript, shell). See the root README → "Examples in the docs".
import { spawn, spawnSync } from "node:child_process";
import { globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fencedBlocks } from "./docs/fenced-blocks.mjs";
import { createScratchProject } from "./docs/scratch-project.mjs";

const root = resolve(import.meta.dirname, "..");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "no-run": { type: "boolean", default: false },
    jobs: { type: "string", default: "2" },
    "timeout-ms": { type: "string", default: "60000" },
    keep: { type: "boolean", default: false },
  },
});
const files = (
  positionals.length > 0 ? positionals : ["README.md", "packages/*/README.md", "docs/**/*.md"]
).flatMap((pattern) => globSync(pattern, { cwd: root }));

const project = createScratchProject();
const blocks = [];
for (const file of files.sort()) {
  for (const block of fencedBlocks(readFileSync(join(root, file), "utf8"))) {
    if (block.kind === undefined) continue;
    const slug = `${file.replace(/\.md$/, "").replace(/[^\w]+/g, "-")}-L${block.line}`;
    const extension = { ts: "ts", js: "mjs", sh: "sh" }[block.kind];
    const path = join(project, "blocks", `${slug}.${extension}`);
    const preludeLines = block.prelude === "" ? 0 : block.prelude.split("\n").length;
    const source =
      block.kind === "ts"
        ? `${block.prelude}${preludeLines ? "\n" : ""}${block.code}\nexport {};\n`
        : `${block.code}\n`;
    writeFileSync(path, source);
    blocks.push({ ...block, file, slug, path, preludeLines: preludeLines && preludeLines + 1, failures: [] });
  }
}

typeCheck(blocks.filter((block) => block.kind === "ts"));
for (const block of blocks.filter((block) => block.kind !== "ts" && block.marks !== "run"))
  syntaxCheck(block);
const runnable = blocks.filter((block) => block.marks === "run" && block.failures.length === 0);
if (!values["no-run"]) await runAll(runnable, Number(values.jobs));

let failed = 0;
for (const block of blocks) {
  const where = `${block.file}:${block.line}`;
  const what =
    block.marks === "run"
      ? values["no-run"]
        ? "checked"
        : "ran"
      : block.marks === "partial"
        ? "partial"
        : `norun (${block.reason})`;
  if (block.failures.length === 0) {
    console.log(`✓ ${where} ${block.info} — ${what}`);
    continue;
  }
  failed++;
  console.log(`✗ ${where} ${block.info}`);
  for (const failure of block.failures) console.log(indent(failure));
}
if (!values.keep) rmSync(project, { recursive: true, force: true });
else console.log(`scratch project kept at ${project}`);
const ran = values["no-run"] ? 0 : runnable.length;
console.log(
  `${blocks.length} blocks: ${ran} run, ${blocks.length - ran} type-checked only${failed ? `, ${failed} failed` : ""}`,
);
process.exitCode = failed ? 1 : 0;

/**
 * Type-checks every TypeScript block at once with `strict`, and files each error under its block. `tsc` reports
 * only syntax errors while any file has one, so blocks with syntax errors are set aside and the rest checked
 * again.
 */
function typeCheck(tsBlocks) {
  let remaining = tsBlocks;
  while (remaining.length > 0) {
    const tsconfig = JSON.parse(readFileSync(join(project, "tsconfig.json"), "utf8"));
    tsconfig.files = remaining.map((block) => relative(project, block.path));
    delete tsconfig.include;
    writeFileSync(join(project, "tsconfig.check.json"), JSON.stringify(tsconfig));
    const tsc = join(root, "node_modules", ".bin", "tsc");
    const result = spawnSync(tsc, ["-p", join(project, "tsconfig.check.json"), "--pretty", "false"], {
      encoding: "utf8",
    });
    const bySlug = new Map(remaining.map((block) => [block.slug, block]));
    const syntax = new Set();
    for (const line of `${result.stdout}${result.stderr}`.split("\n")) {
      const match = /blocks\/([^/(]+)\.ts\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
      if (!match) {
        if (result.status !== 0 && line.trim() !== "" && !/^\s/.test(line))
          throw new Error(`tsc failed outside the blocks: ${line}`);
        continue;
      }
      const [, slug, row, column, code, message] = match;
      const block = bySlug.get(slug);
      const codeRow = Number(row) - block.preludeLines;
      const at = codeRow > 0 ? `${block.file}:${block.line + codeRow}:${column}` : `prelude line ${row}`;
      block.failures.push(`${at}: ${code} ${message}`);
      if (/^TS1\d{3}$/.test(code)) syntax.add(block);
    }
    remaining = syntax.size > 0 ? remaining.filter((block) => !syntax.has(block)) : [];
  }
}

/** `node --check` for JavaScript, `bash -n` for shell. */
function syntaxCheck(block) {
  const [command, args] =
    block.kind === "js" ? [process.execPath, ["--check", block.path]] : ["bash", ["-n", block.path]];
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) block.failures.push(`${result.stdout}${result.stderr}`.trim());
}

/** Runs the runnable blocks, `jobs` at a time. */
async function runAll(queue, jobs) {
  const pending = [...queue];
  const worker = async () => {
    for (let block = pending.shift(); block !== undefined; block = pending.shift()) await runBlock(block);
  };
  await Promise.all(Array.from({ length: jobs }, worker));
}

/**
 * Runs one block in a directory of its own, in a process group of its own: TypeScript and JavaScript with this
 * Node, shell with `bash -euo pipefail` and the packages' commands on `PATH`. A block that outlives the
 * timeout fails; whatever it left running is killed with its group.
 */
function runBlock(block) {
  const cwd = join(project, "work", block.slug);
  mkdirSync(cwd, { recursive: true });
  const [command, args] =
    block.kind === "sh" ? ["bash", ["-euo", "pipefail", block.path]] : [process.execPath, [block.path]];
  const env = { ...process.env, PATH: `${join(project, "node_modules", ".bin")}:${process.env.PATH}` };
  const started = performance.now();
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      block.failures.push(`did not finish within ${values["timeout-ms"]} ms`);
      killGroup(child.pid);
    }, Number(values["timeout-ms"]));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(child.pid);
      if (code !== 0 && block.failures.length === 0)
        block.failures.push(
          `exited with ${code ?? signal}:\n${output.trim().split("\n").slice(-20).join("\n")}`,
        );
      block.seconds = (performance.now() - started) / 1000;
      resolveRun();
    });
  });
}

/** SIGKILL to a process group that may already be gone. */
function killGroup(pid) {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {}
}

/** Indents every line of `text`. */
function indent(text) {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
