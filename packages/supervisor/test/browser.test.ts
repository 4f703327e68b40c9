import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "@x/test-support/wait-for";
import { type Browser, chromium as playwright } from "playwright-core";
import { describe, expect, it, onTestFinished } from "vitest";
import { readQueueView } from "../src/index.js";
import { openReadOnly } from "../src/status.js";
import { paths, RawConnection } from "./harness.js";
import { startWithHttp, writeFetcherFile } from "./http-page.js";

/** Debian's Chromium (`pnpm services` installs it), at /usr/bin/chromium or on PATH; never downloaded. */
const chromium: string | undefined = existsSync("/usr/bin/chromium")
  ? "/usr/bin/chromium"
  : (() => {
      const found = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" });
      return found.status === 0 ? found.stdout.trim() : undefined;
    })();

/** Where the README's picture is; rewritten only with UPDATE_PICTURES=1 (it shows times, so it changes). */
const picture = fileURLToPath(new URL("../../../docs/pictures/supervisor-queue-page.png", import.meta.url));

const script = `<script>window.__injected = 1</script>`;

/** Fixed fetchers and payloads, so the screenshot shows the same queue every time. */
function fetchers(p: ReturnType<typeof paths>): void {
  writeFetcherFile(p, "pypi", 1764000000, [
    "python3Packages.requests 2.32.3 2.32.4 https://pypi.org/project/requests/",
    "python3Packages.flask 3.1.0 3.1.1 https://pypi.org/project/flask/",
    `python3Packages.evil 1.0 ${script}`,
    "python3Packages.numpy 2.2.6 2.3.0 https://pypi.org/project/numpy/",
  ]);
  writeFetcherFile(p, "github", 1764000600, [
    "ripgrep 14.1.0 14.1.1 https://github.com/BurntSushi/ripgrep/releases",
    "jq 1.7.1 1.8.0 https://github.com/jqlang/jq/releases",
    "python3Packages.flask 3.1.0 3.1.1 https://github.com/pallets/flask/releases",
  ]);
  writeFetcherFile(p, "repology", 1764001200, [
    "hello 2.12.1 2.12.2",
    "curl 8.13.0 8.14.1",
    "zstd 1.5.6 1.5.7",
  ]);
}

/** The text of each cell of the table `id`'s body rows. */
async function tableText(page: import("playwright-core").Page, id: string): Promise<string[][]> {
  return page.$$eval(`#${id} tbody tr`, (rows) =>
    rows.map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent ?? "")),
  );
}

describe.skipIf(chromium === undefined)(
  `the queue page in headless Chromium (${chromium ?? "skipped: no chromium at /usr/bin/chromium or on PATH; apt-get install chromium"})`,
  () => {
    it("shows the database's queue while workers run, refreshes itself, shows a <script> payload as text", async () => {
      const p = paths();
      fetchers(p);
      const { base } = await startWithHttp(p, { refreshMs: 500, pageSize: 50 });
      // Two workers: each finishes one job (exit 0 and exit 1) and holds the next.
      using a = await RawConnection.open(p.socket);
      using b = await RawConnection.open(p.socket);
      const attr = (reply: string | null) => reply!.split(" ")[1]!;
      const a1 = attr(await a.send("READY\n"));
      const a2 = attr(await a.send(`DONE ${a1} 0\n`));
      const b1 = attr(await b.send("READY\n"));
      const b2 = attr(await b.send(`DONE ${b1} 1\n`));

      let browser: Browser | undefined;
      onTestFinished(() => browser?.close());
      browser = await playwright.launch({
        executablePath: chromium!,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text());
      });
      await page.goto(`${base}/`);

      // The tables are the database's: read it at the same moment (the workers hold their jobs).
      const db = openReadOnly(p.db);
      onTestFinished(() => {
        db.close();
      });
      const view = readQueueView(db, { pageSize: 50 });
      const queue = await tableText(page, "queue");
      expect(queue.map((row) => row.slice(0, 4))).toEqual(
        view.entries.map((e) => [String(e.position), e.attrPath, e.fetcher, e.payload]),
      );
      expect(queue.length).toBe(10 - 4); // ten entries, four dispatched
      expect((await tableText(page, "running")).map((r) => r[0]).sort()).toEqual([a2, b2].sort());
      expect((await tableText(page, "finished")).map((r) => [r[0], r[1]]).sort()).toEqual(
        [
          [a1, "0"],
          [b1, "1"],
        ].sort(),
      );
      expect((await tableText(page, "runs")).map((r) => [r[0], r[3]])).toEqual([
        ["github", "3"],
        ["pypi", "4"],
        ["repology", "3"],
      ]);
      expect((await tableText(page, "cycles")).map((r) => r[0])).toEqual(view.cycles.map((c) => c.fetcher));

      // The payload with a script tag is text, and it never ran.
      const evilRow = queue.find((row) => row[1] === "python3Packages.evil"); // the jitter keeps it waiting
      expect(evilRow?.[3]).toBe(`1.0 ${script}`);
      expect(await page.locator("#queue td.p", { hasText: "<script>" }).count()).toBe(1);
      expect(await page.evaluate("typeof window.__injected")).toBe("undefined");
      expect(await page.evaluate("document.scripts.length")).toBe(1);

      // The README's picture: written to docs/pictures with UPDATE_PICTURES=1, else next to the test's files.
      const shot = join(p.root, "supervisor-queue-page.png");
      await page.screenshot({ path: shot, fullPage: true });
      expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
      if (process.env.UPDATE_PICTURES === "1") copyFileSync(shot, picture);

      // The page refreshes itself: a job finished after it loaded appears, in a new <main>.
      await page.evaluate('window.__main = document.querySelector("main"); true');
      const a3 = attr(await a.send(`DONE ${a2} 0\n`));
      await waitFor(
        async () => (await tableText(page, "finished")).some((r) => r[0] === a2),
        30_000,
        "the refreshed page to show the finished job",
      );
      expect((await tableText(page, "running")).map((r) => r[0]).sort()).toEqual([a3, b2].sort());
      expect(await page.evaluate('document.querySelector("main") !== window.__main')).toBe(true);
      expect(errors).toEqual([]); // the CSP allows the page's own script and style

      // Without JavaScript the page is complete as served.
      const plain = await browser.newContext({ javaScriptEnabled: false });
      const noScript = await plain.newPage();
      await noScript.goto(`${base}/`);
      expect((await tableText(noScript, "finished")).some((r) => r[0] === a2)).toBe(true);
      expect((await tableText(noScript, "queue")).length).toBe(10 - 5);
      await plain.close();
    }, 120_000);
  },
);
