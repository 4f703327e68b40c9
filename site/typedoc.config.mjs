// TypeDoc: the API reference of every entry point of every package, as Markdown pages of the site. The
// build fails on a `{@link}` to nothing, or on a type the pages name but do not document.
import { entryPoints } from "./scripts/entry-points.mjs";

const entries = entryPoints();

/** @type {import("typedoc").TypeDocOptions & import("typedoc-plugin-markdown").PluginOptions} */
export default {
  entryPoints: entries.map(({ file }) => `../${file}`),
  tsconfig: "./tsconfig.typedoc.json",
  plugin: ["typedoc-plugin-markdown", "./scripts/typedoc-module-names.mjs"],
  out: "./content/api",
  readme: "none",
  excludePrivate: true,
  excludeInternal: true,
  excludeExternals: true,
  disableSources: true,
  hideGenerator: true,
  hideBreadcrumbs: true,
  hidePageHeader: true,
  sanitizeComments: true,
  useHTMLAnchors: true,
  name: "API reference",
  outputFileStrategy: "modules",
  entryFileName: "index",
  // Undocumented exports are found by scripts/undocumented.mjs: TypeDoc's `notDocumented` also asks for a
  // comment on every property of every object type, the fields of `toJSON()`'s result included.
  validation: { notExported: true, invalidLink: true, notDocumented: false },
  treatValidationWarningsAsErrors: true,
  logLevel: "Warn",
};
