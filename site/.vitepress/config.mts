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
  // Headings take GitHub's anchors, so the READMEs' `#anchor` links work on the site too.
  markdown: { anchor: { slugify: githubSlug } },
  // The local search index (about 2 MB) is one chunk, loaded when the search box opens.
  vite: { build: { chunkSizeWarningLimit: 4096 } },
  themeConfig: {
    nav: nav(),
    sidebar: sidebar(),
    search: { provider: "local" },
    outline: [2, 3],
    socialLinks: [{ icon: "github", link: repository }],
  },
});
