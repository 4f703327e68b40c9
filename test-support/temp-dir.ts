import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

/**
 * A fresh temporary directory (`prefix` and random characters, under the OS temporary directory), removed
 * when the current test finishes, whatever its outcome. Call it inside a test (or a `beforeEach`, or a helper
 * called from either). Vitest runs `onTestFinished` callbacks in reverse order of registration, so whatever
 * the test registers after creating the directory (a process working in it, a database open on a file in it)
 * is released before the directory is removed.
 */
export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
