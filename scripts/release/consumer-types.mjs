// The type check of one installed package, as a TypeScript user's fresh project meets it: a file that imports
// every entry point, compiled under each supported TypeScript major and each module setting a project uses.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The module settings of a fresh project: Node's own resolution, and a bundler's (two `module` values). */
const moduleSettings = [
  { label: "nodenext", module: "nodenext", moduleResolution: "nodenext" },
  { label: "bundler-esnext", module: "esnext", moduleResolution: "bundler" },
  { label: "bundler-preserve", module: "preserve", moduleResolution: "bundler" },
];

/**
 * The `## Install` section of a README (up to the next `## ` heading), or "" when there is none.
 */
export function installSection(readme) {
  const match = /^## Install[^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme);
  return match?.[1] ?? "";
}

/**
 * Type-checks `entries` from the project in `dir`, where the package is installed, and where what the README's
 * Install section tells a TypeScript user to add, `@types/node`, is found (in `dir` or a parent directory's
 * `node_modules`, as TypeScript looks them up). `compilers` come from {@link compilerOf}; each runs its module settings, all at once, with `strict` and
 * `skipLibCheck: false` and nothing else set, so `types` keeps each compiler's default (`[]` from TypeScript 7
 * on). The compilers have started when it returns, so other synchronous work can run meanwhile. Rejects with every failing combination's output.
 */
export function typeCheckConsumer({ dir, entries, compilers, env }) {
  writeFileSync(
    join(dir, "consumer.ts"),
    entries
      .map((entry, i) => `import * as entry${i} from ${JSON.stringify(entry)};\nexport { entry${i} };\n`)
      .join(""),
  );
  const runs = [];
  for (const { label, ...settings } of moduleSettings) {
    const compilerOptions = {
      ...settings,
      target: "es2022",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
    };
    const config = `tsconfig.${label}.json`;
    writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
    for (const compiler of compilers.filter((compiler) => compiler.settings.includes(label)))
      runs.push(
        execFileAsync(process.execPath, [compiler.tsc, "-p", config], { cwd: dir, env }).then(
          () => undefined,
          (error) =>
            `${compiler.name}, ${label}:\n${`${error.stdout ?? ""}${error.stderr || error.message}`.trim()}`,
        ),
      );
  }
  return Promise.all(runs).then((outcomes) => {
    const failures = outcomes.filter(Boolean);
    if (failures.length > 0) throw new Error(failures.join("\n"));
  });
}

/**
 * A compiler for {@link typeCheckConsumer}: the `typescript` package installed as `packageName` (found with
 * `resolve`), run under the module settings labelled `settings` (default: every one).
 */
export function compilerOf(packageName, resolve, settings = moduleSettings.map(({ label }) => label)) {
  const manifest = resolve(`${packageName}/package.json`);
  const { version } = JSON.parse(readFileSync(manifest, "utf8"));
  return { name: `TypeScript ${version}`, tsc: join(manifest, "..", "bin", "tsc"), settings };
}
