import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { XError } from "../src/index.js";
import { runModule } from "./run-module.js";

const packageDir = new URL("..", import.meta.url).pathname;

/**
 * Two separately installed copies of @x/core, loaded as two distinct modules: an error made by one copy
 * must be recognised by the other, although `instanceof` cannot see it.
 */
describe("XError.is across two installed copies", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "x-core-copies-"));
    for (const copy of ["copy-a", "copy-b"]) {
      await cp(join(packageDir, "src"), join(dir, copy, "src"), { recursive: true });
    }
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("recognises an error from the other copy by its brand", async () => {
    const script = `
      const a = await import(${JSON.stringify(join(dir, "copy-a/src/x-error.ts"))});
      const b = await import(${JSON.stringify(join(dir, "copy-b/src/x-error.ts"))});
      const error = new a.XError("ERR_X_DEMO", "from copy a");
      console.log(JSON.stringify({
        distinct: a.XError !== b.XError,
        instanceOfB: error instanceof b.XError,
        isB: b.XError.is(error),
        isBWithCode: b.XError.is(error, "ERR_X_DEMO"),
      }));`;
    const { stdout, stderr } = await runModule(script);
    expect(stderr).toBe("");
    expect(JSON.parse(stdout)).toEqual({ distinct: true, instanceOfB: false, isB: true, isBWithCode: true });
    // and a look-alike without the brand is not taken for one
    expect(XError.is(Object.assign(new Error("m"), { code: "ERR_X_DEMO" }))).toBe(false);
  });
});
