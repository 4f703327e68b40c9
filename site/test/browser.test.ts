import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Browser, type Page, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dist } from "./built-site.js";
import { serveStatic } from "./static-server.js";

/** Debian's Chromium (`apt-get install chromium`), at /usr/bin/chromium or on PATH; never downloaded. */
const chromium: string | undefined = existsSync("/usr/bin/chromium")
  ? "/usr/bin/chromium"
  : (() => {
      const found = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" });
      return found.status === 0 ? found.stdout.trim() : undefined;
    })();
if (chromium === undefined && process.env.CI) throw new Error("no chromium at /usr/bin/chromium or on PATH");

/** Where the test leaves its screenshots (gitignored). */
const output = fileURLToPath(new URL("../test-output", import.meta.url));

const packages = ["core", "process-guard", "supervisor", "checkpoint", "rmq-storage", "polling-catalog"];

describe.skipIf(chromium === undefined)("the built site in headless Chromium", () => {
  let browser: Browser;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    const served = await serveStatic(dist);
    base = served.base;
    close = () => served.server.close();
    browser = await playwright.launch({ executablePath: chromium, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    close?.();
  });

  /** Opens `path` in a new page; the console errors and failed requests of the page so far, at any time. */
  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("response", (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${base}${path}`, { waitUntil: "networkidle" });
    return { page, errors };
  }

  it("renders the home page: the toolkit's heading, the navigation, no console error", async () => {
    const { page, errors } = await open("/");
    await expect(page.locator("main h1").first().textContent()).resolves.toContain("resilient batch");
    expect(await page.locator(".VPNavBar").isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Benchmarks" }).first().isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it.each(packages)("renders the page of @x/%s from its README, with no console error", async (name) => {
    const { page, errors } = await open(`/packages/${name}.html`);
    const heading = page.locator("main h1").first();
    expect(await heading.isVisible()).toBe(true);
    expect(await heading.textContent()).toContain(`@x/${name}`);
    expect(errors).toEqual([]);
  });

  it("renders an API page with its exports, and a screenshot of it", async () => {
    const { page, errors } = await open("/api/@x/process-guard.html");
    expect(await page.locator("main h1").first().textContent()).toContain("@x/process-guard");
    const timeGuard = page.locator("main h3#timeguard");
    expect(await timeGuard.isVisible()).toBe(true);
    mkdirSync(output, { recursive: true });
    await page.screenshot({ path: `${output}/api-page.png` });
    expect(errors).toEqual([]);
  });

  it("shows the benchmark figures on the benchmark pages", async () => {
    const { page, errors } = await open("/docs/benchmarks/process-guard.html");
    const pictures = page.locator("main img");
    expect(await pictures.count()).toBeGreaterThan(0);
    const widths = await pictures.evaluateAll((images) =>
      images.map((image) => (image as HTMLImageElement).naturalWidth),
    );
    expect(widths.every((width) => width > 0)).toBe(true);
    expect(errors).toEqual([]);
  });

  it("finds timeGuard with the local search, and its result leads to the API page", async () => {
    const { page, errors } = await open("/");
    await page.locator(".VPNavBarSearch button").click();
    const input = page.locator(".VPLocalSearchBox input");
    await input.fill("timeGuard");
    const results = page.locator(".VPLocalSearchBox .results li");
    await results.first().waitFor();
    const texts = await results.allTextContents();
    expect(texts.some((text) => text.includes("timeGuard"))).toBe(true);
    const hrefs = await page
      .locator(".VPLocalSearchBox .results a")
      .evaluateAll((links) => links.map((link) => (link as HTMLAnchorElement).getAttribute("href")));
    expect(hrefs.some((href) => href?.includes("/api/@x/process-guard"))).toBe(true);
    expect(errors).toEqual([]);
  });
});
