import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const tsx = new URL("../../../node_modules/.bin/tsx", import.meta.url).pathname;

/** Result of {@link runModule}: the exit code (0 on success) and what the module printed. */
export interface ModuleRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs TypeScript module source in a fresh Node process (through tsx) and reports how it ended. */
export async function runModule(source: string): Promise<ModuleRun> {
  const dir = await mkdtemp(join(tmpdir(), "x-core-module-"));
  const file = join(dir, "main.mts");
  await writeFile(file, source);
  try {
    return await new Promise<ModuleRun>((resolve) => {
      execFile(tsx, [file], (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
