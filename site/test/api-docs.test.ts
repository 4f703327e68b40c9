import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { entryPoints } from "../scripts/entry-points.mjs";
import { root } from "../scripts/pages.mjs";
import { githubSlug } from "../scripts/slug.mjs";
import { exportsOf, undocumentedExports } from "../scripts/undocumented.mjs";
import { dist } from "./built-site.js";

const entries = entryPoints() as { specifier: string; file: string }[];
const tsconfig = join(import.meta.dirname, "../tsconfig.typedoc.json");

describe("the API reference", () => {
  it("covers every entry point of every package.json's exports", () => {
    const specifiers = entries.map(({ specifier }) => specifier);
    expect(specifiers).toContain("@x/checkpoint/redis");
    expect(specifiers).toContain("@x/polling-catalog/testing");
    expect(specifiers).toContain("@x/process-guard");
    const index = readFileSync(join(dist, "api/index.html"), "utf8");
    for (const specifier of specifiers) expect(index).toContain(`>${specifier}</a>`);
  });

  it("has a doc comment for every export of every entry point", () => {
    expect(
      undocumentedExports(
        entries.map(({ file }) => join(root, file)),
        tsconfig,
      ),
    ).toEqual([]);
  });

  it("finds an export without a doc comment, also inside a namespace and behind a re-export", () => {
    const dir = mkdtempSync(join(tmpdir(), "x-site-docs-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "inner.ts"), "/** Documented. */\nexport const a = 1;\nexport function b() {}\n");
    writeFileSync(
      join(dir, "space.ts"),
      "export type C = string;\n/** Documented. */\nexport type D = number;\n",
    );
    writeFileSync(
      join(dir, "entry.ts"),
      'export { a, b } from "./inner.js";\nexport * as space from "./space.js";\n/** Documented. */\nexport class E {}\nexport interface F {}\n',
    );
    const entry = join(dir, "entry.ts");
    expect(undocumentedExports([entry])).toEqual([`${entry}: b`, `${entry}: space.C`, `${entry}: F`]);
  });

  it("gives every export of every entry point a heading on the entry point's page", () => {
    const index = readFileSync(join(dist, "api/index.html"), "utf8");
    /** The built page of an entry point, as the API index links it (index.html when it has sub-pages). */
    const pageOf = (specifier: string): string => {
      const href = new RegExp(`href="([^"]+)"[^>]*>${specifier.replace(/[/.-]/g, "\\$&")}</a>`).exec(
        index,
      )?.[1];
      if (!href) throw new Error(`no link to ${specifier} on the API index`);
      return readFileSync(join(dist, "api", href.replace(/^\.\//, "").replace(/\/$/, "/index.html")), "utf8");
    };
    const missing: string[] = [];
    const found = exportsOf(
      entries.map(({ file }) => join(root, file)),
      tsconfig,
    ) as { entry: string; name: string }[];
    for (const { specifier, file } of entries) {
      const page = pageOf(specifier);
      const names = found.filter(({ entry, name }) => entry === join(root, file) && !name.includes("."));
      expect(names.length).toBeGreaterThan(0);
      for (const { name } of names)
        if (!page.includes(`id="${githubSlug(name)}"`) && !page.includes(`>${name}</a>`))
          missing.push(`${specifier}: ${name}`);
    }
    expect(missing).toEqual([]);
    expect(pageOf("@x/process-guard")).toContain('id="timeguard"');
  });
});
