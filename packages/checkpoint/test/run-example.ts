import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** Runs `examples/<file>` as users run it, a child process over the package's own entry points; its stdout lines. */
export function runExample(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--conditions=@x/source", "--import", tsx, join(packageDir, "examples", file)],
      { cwd: packageDir, timeout: 60_000 },
      (error, out, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out.trim().split("\n")),
    );
  });
}
