// Which exports of the packages' entry points have no doc comment, read straight from the TypeScript
// sources: the site's build and `pnpm check:site` both run it. (TypeDoc's `validation.notDocumented` also
// asks for a comment on every property of every object type, return types included.)
import { dirname } from "node:path";
import ts from "typescript";

/**
 * Every export of the `files` (TypeScript entry points, absolute paths): `{ entry, name, documented }`, where
 * `name` is `v.<name>` for the exports of a namespace `v` (`export * as v`), which itself needs no comment.
 * Compiler options come from the `tsconfig` file, or default to Node's ESM resolution.
 */
export function exportsOf(files, tsconfig) {
  const options = tsconfig
    ? ts.parseJsonConfigFileContent(
        ts.readConfigFile(tsconfig, ts.sys.readFile).config,
        ts.sys,
        dirname(tsconfig),
      ).options
    : { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const found = [];
  const visit = (entry, prefix, moduleSymbol) => {
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const name = `${prefix}${exported.name}`;
      if (symbol.flags & ts.SymbolFlags.Module) visit(entry, `${name}.`, symbol);
      else
        found.push({
          entry,
          name,
          documented:
            symbol.getDocumentationComment(checker).length > 0 || symbol.getJsDocTags(checker).length > 0,
        });
    }
  };
  for (const file of files) {
    const source = program.getSourceFile(file);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${file}: not a module the TypeScript program could read`);
    visit(file, "", moduleSymbol);
  }
  return found;
}

/** `"<entry>: <name>"` for every export of the `files` without a doc comment (see {@link exportsOf}). */
export function undocumentedExports(files, tsconfig) {
  return exportsOf(files, tsconfig)
    .filter(({ documented }) => !documented)
    .map(({ entry, name }) => `${entry}: ${name}`);
}
