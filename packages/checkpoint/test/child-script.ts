import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { onTestFinished } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * Starts a child Node on a module script (run from the package directory, over the package's sources) and
 * collects its stdout lines. The child gets SIGKILL when the current test finishes; Vitest runs
 * `onTestFinished` callbacks in reverse order of registration, so that happens before a directory the test
 * made earlier is removed.
 */
export function startScript(script: string) {
  const child = spawn(
    process.execPath,
    ["--conditions=@x/source", "--import", tsx, "--input-type=module", "-e", script],
    { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] },
  );
  onTestFinished(() => {
    child.kill("SIGKILL");
  });
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited };
}
