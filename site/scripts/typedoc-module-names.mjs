// A TypeDoc plugin: each module is named by the specifier users import it by (`@x/checkpoint/redis`),
// not by its source file's path.
import { relative, resolve } from "node:path";
import { Converter, ReflectionKind } from "typedoc";
import { entryPoints } from "./entry-points.mjs";
import { root } from "./pages.mjs";

/** Renames every module reflection after the package.json `exports` entry its source file backs. */
export function load(app) {
  const specifiers = new Map(entryPoints().map(({ specifier, file }) => [file, specifier]));
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Module)) return;
    const declaration = context.getSymbolFromReflection(reflection)?.declarations?.[0];
    const file = declaration && relative(root, resolve(declaration.getSourceFile().fileName));
    const specifier = file && specifiers.get(file);
    if (specifier === undefined) throw new Error(`no package.json export names the module ${file}`);
    reflection.name = specifier;
  });
}
