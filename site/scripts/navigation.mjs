// The site's navigation bar and sidebar, from the pages that scripts/prepare.mjs lays out.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { content, copiedPages, title } from "./pages.mjs";

/** `{ text, link }` of a copied page: its first heading, and its route. */
function item({ source, page }) {
  return { text: title(source), link: `/${page.replace(/(index)?\.md$/, "")}` };
}

/** The API reference's modules, one per package entry point, as TypeDoc's index page lists them. */
function apiItems() {
  const index = join(content, "api/index.md");
  if (!existsSync(index)) return [];
  return [...readFileSync(index, "utf8").matchAll(/^- \[([^\]]+)\]\(([^)]+)\.md\)$/gm)].map(
    ([, text, path]) => ({
      text,
      link: `/api/${path.replace(/index$/, "")}`,
    }),
  );
}

/** The sidebar's groups: the packages, the guides, the benchmarks, the API reference. */
export function sidebar() {
  const pages = copiedPages();
  const packages = pages.filter(({ page }) => page.startsWith("packages/"));
  const benchmarks = pages.filter(({ page }) => page.startsWith("docs/benchmarks"));
  const guides = pages.filter(
    ({ page }) => page.startsWith("docs/") && !benchmarks.some((b) => b.page === page),
  );
  return [
    { text: "Packages", items: packages.map(item) },
    { text: "Guides", items: guides.map(item) },
    { text: "Benchmarks", collapsed: false, items: benchmarks.map(item) },
    {
      text: "API reference",
      collapsed: true,
      items: [{ text: "All entry points", link: "/api/" }, ...apiItems()],
    },
  ];
}

/** The navigation bar: the same groups, as links to their first pages. */
export function nav() {
  return [
    { text: "Packages", link: "/packages/core" },
    { text: "Guides", link: "/docs/architecture" },
    { text: "Benchmarks", link: "/docs/benchmarks" },
    { text: "API", link: "/api/" },
  ];
}
