import { defineConfig } from "vitepress";
import { nav, sidebar } from "../scripts/navigation.mjs";
import { repository } from "../scripts/pages.mjs";
import { githubSlug } from "../scripts/slug.mjs";

/** The documentation site: `pnpm docs:dev` serves it, `pnpm docs:build` writes it to `.vitepress/dist`. */
export default defineConfig({
  title: "@x toolkit",
  description: "Resilient batch and stream processing for Node.js",
  srcDir: "content",
  // No icon of its own: an empty one, so browsers do not ask the server for /favicon.ico.
  head: [["link", { rel: "icon", href: "data:," }]],
  // The API reference and the copies are generated; every other page is linked from the sidebar.
  markdown: { anchor: { slugify: githubSlug } },
  themeConfig: {
    nav: nav(),
    sidebar: sidebar(),
    search: { provider: "local" },
    outline: [2, 3],
    socialLinks: [{ icon: "github", link: repository }],
  },
});
