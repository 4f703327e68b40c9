// Command-line options read as glibc's getopt_long reads them with "+" (options end at the first operand), with
// its messages, so that a command that takes timeout(1)'s command line also answers like it.
import { UsageError } from "@x/core/internal";

/** One option: its long name (without `--`), its one-letter form if any, and whether it takes a value. */
export interface OptionSpec {
  long: string;
  short?: string;
  takesValue: boolean;
}

/** An option as it was given, by its long name, with its value when it takes one. */
export interface GivenOption {
  long: string;
  value: string | undefined;
}

/** What {@link getopt} found: the options in order, then the operands (everything from the first operand on). */
export interface Parsed {
  options: GivenOption[];
  operands: string[];
}

/** The long option `name` names: itself, or the only one it is a prefix of (an exact name always wins). */
function findLong(name: string, arg: string, specs: readonly OptionSpec[]): OptionSpec {
  const exact = specs.find((spec) => spec.long === name);
  if (exact) return exact;
  const matches = specs.filter((spec) => spec.long.startsWith(name));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new UsageError(`unrecognized option '${arg}'`);
  const possibilities = matches.map((spec) => `'--${spec.long}'`).join(" ");
  throw new UsageError(`option '--${name}' is ambiguous; possibilities: ${possibilities}`);
}

/**
 * Reads `args` as `getopt_long(argc, argv, "+…", …)` does: `--name`, `--name=value`, `--name value`, any
 * unambiguous prefix of a long name, `-x`, clustered short options (`-vk5`, `-s INT`, `-sINT`), and `--` or the
 * first operand (a lone `-` is one) ends the options.
 *
 * @throws UsageError with getopt's messages: `unrecognized option '--foo'`, `invalid option -- 'x'`, `option
 *   '--signal' requires an argument`, `option requires an argument -- 's'`, `option '--foreground' doesn't
 *   allow an argument`, `option '--p' is ambiguous; possibilities: …`
 */
export function getopt(args: readonly string[], specs: readonly OptionSpec[]): Parsed {
  const options: GivenOption[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return { options, operands: args.slice(i + 1) };
    if (!arg.startsWith("-") || arg === "-") break;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const spec = findLong(eq === -1 ? arg.slice(2) : arg.slice(2, eq), arg, specs);
      let value = eq === -1 ? undefined : arg.slice(eq + 1);
      if (!spec.takesValue && value !== undefined) {
        throw new UsageError(`option '--${spec.long}' doesn't allow an argument`);
      }
      if (spec.takesValue && value === undefined) {
        value = args[++i];
        if (value === undefined) throw new UsageError(`option '--${spec.long}' requires an argument`);
      }
      options.push({ long: spec.long, value });
      continue;
    }
    for (let at = 1; at < arg.length; at++) {
      const letter = arg[at]!;
      const spec = specs.find((candidate) => candidate.short === letter);
      if (!spec) throw new UsageError(`invalid option -- '${letter}'`);
      if (!spec.takesValue) {
        options.push({ long: spec.long, value: undefined });
        continue;
      }
      const value = at + 1 < arg.length ? arg.slice(at + 1) : args[++i];
      if (value === undefined) throw new UsageError(`option requires an argument -- '${letter}'`);
      options.push({ long: spec.long, value });
      break;
    }
  }
  return { options, operands: args.slice(i) };
}
