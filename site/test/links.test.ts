import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { brokenLinks } from "../scripts/check-links.mjs";
import { copiedPages, rewriteLinks } from "../scripts/pages.mjs";
import { dist } from "./built-site.js";

/** A scratch directory with `files` (path → HTML), removed after the test. */
function site(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "x-site-links-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, html] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), html);
  }
  return dir;
}

describe("links of the built site", () => {
  it("every link and #anchor of every page resolves", () => {
    expect(brokenLinks(dist)).toEqual([]);
  });

  it("finds a link to a missing page, to a missing anchor, and to a missing picture", () => {
    const dir = site({
      "index.html": `<a href="./guide.html#setup">ok</a> <a href="/guide.html#nowhere">bad anchor</a>
        <a href="missing.html">bad page</a> <img src="pictures/a.svg"> <a href="#top" id="top">self</a>
        <a href="https://example.com/x#y">other site</a>`,
      "guide.html": `<h2 id="setup">Setup</h2><a href="./">home</a>`,
    });
    expect(brokenLinks(dir)).toEqual([
      'index.html: /guide.html#nowhere (guide.html has no element with id "nowhere")',
      "index.html: missing.html (no file missing.html)",
      "index.html: pictures/a.svg (no file pictures/a.svg)",
    ]);
  });
});

describe("README links on the site", () => {
  const pagesBySource = new Map(
    (copiedPages() as { source: string; page: string }[]).map(({ source, page }) => [source, page]),
  );
  const rewrite = (markdown: string, source: string, page: string): string =>
    rewriteLinks(markdown, source, page, pagesBySource);

  it("point at the site's pages, whether written as GitHub URLs or relative paths, and keep anchors", () => {
    const markdown = [
      "[ops](https://github.com/x-toolkit/x/blob/main/docs/operations.md#rabbitmq) and",
      "[core](../core/README.md#xerror), [the toolkit](https://github.com/x-toolkit/x#readme),",
      "![figure](https://raw.githubusercontent.com/x-toolkit/x/main/docs/pictures/architecture.svg)",
    ].join("\n");
    expect(rewrite(markdown, "packages/checkpoint/README.md", "packages/checkpoint.md")).toBe(
      [
        "[ops](../docs/operations.md#rabbitmq) and",
        "[core](./core.md#xerror), [the toolkit](../index.md),",
        "![figure](../docs/pictures/architecture.svg)",
      ].join("\n"),
    );
  });

  it("send files the site does not carry to GitHub, and leave code alone", () => {
    const markdown =
      "See [the script](../scripts/pictures/architecture.mjs) and `[not](a-link.md)`.\n```md\n[x](y.md)\n```";
    expect(rewrite(markdown, "docs/architecture.md", "docs/architecture.md")).toBe(
      "See [the script](https://github.com/x-toolkit/x/blob/main/scripts/pictures/architecture.mjs) and `[not](a-link.md)`.\n```md\n[x](y.md)\n```",
    );
  });

  it("refuse a relative link to a file the repository does not have", () => {
    expect(() => rewrite("[gone](nowhere.md)", "docs/operations.md", "docs/operations.md")).toThrow(
      /docs\/nowhere\.md, which the repository does not have/,
    );
  });
});
