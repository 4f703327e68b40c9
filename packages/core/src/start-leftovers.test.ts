import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { trackCreatedPaths } from "./start-leftovers.js";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("trackCreatedPaths", () => {
  it("removes what was created since, and leaves what existed before", () => {
    root = mkdtempSync(join(tmpdir(), "x-leftovers-"));
    const kept = join(root, "state.db");
    writeFileSync(kept, "data");
    mkdirSync(join(root, "fetchers"));
    const tracked = trackCreatedPaths([
      kept,
      `${kept}-lock`,
      join(root, "fetchers"),
      join(root, "new", "deep", "dir"),
    ]);
    expect(tracked.missing).toEqual([`${kept}-lock`, join(root, "new")]);
    writeFileSync(`${kept}-lock`, "");
    mkdirSync(join(root, "new", "deep", "dir"), { recursive: true });
    writeFileSync(join(root, "fetchers", "f.1.txt"), "x 1 2\n");
    tracked.remove();
    expect(readFileSync(kept, "utf8")).toBe("data");
    expect(existsSync(join(root, "fetchers", "f.1.txt"))).toBe(true);
    expect(existsSync(`${kept}-lock`)).toBe(false);
    expect(existsSync(join(root, "new"))).toBe(false);
    tracked.remove(); // nothing left to remove: no error
  });
});
