import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";

const tsx = new URL("../../../node_modules/.bin/tsx", import.meta.url).pathname;

/** Result of {@link runModule}: the exit code (0 on success) and what the module printed. */
export interface ModuleRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runModule}. */
export interface RunModuleOptions {
  /** Close the reading end of the module's stdout once this many bytes have arrived, as `| head` does. */
  closeStdoutAfterBytes?: number;
}

/** Runs TypeScript module source in a fresh Node process (through tsx) and reports how it ended. */
export async function runModule(source: string, options: RunModuleOptions = {}): Promise<ModuleRun> {
  const dir = await mkdtemp(join(tmpdir(), "x-core-module-"));
  const file = join(dir, "main.mts");
  await writeFile(file, source);
  try {
    return await new Promise<ModuleRun>((resolve, reject) => {
      const child = spawn(tsx, [file], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        const limit = options.closeStdoutAfterBytes;
        if (limit !== undefined && stdout.length >= limit) child.stdout.destroy();
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code, signal) =>
        resolve({ code: code ?? 128 + constants.signals[signal ?? "SIGKILL"], stdout, stderr }),
      );
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
