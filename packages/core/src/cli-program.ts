import { ExitCode, type UsageError } from "./command-line.js";
import { writeStdout } from "./stdio.js";

/**
 * The flags every `@x` command answers by itself, as `parseArgs` options: `-h`/`--help` and `--version`.
 */
export const infoFlagOptions = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/**
 * The help lines of {@link infoFlagOptions}, their descriptions starting at `column` (as the rest of the help).
 *
 * @param column - where descriptions start, counted from 0
 */
export function infoFlagsHelp(column: number): string {
  return [
    helpLine("-h, --help", "show this help", column),
    helpLine("--version", "print the version and exit", column),
  ].join("\n");
}

/**
 * One line of a command's help: the flag indented by two spaces, its description from `column` on (or two
 * spaces after a flag too long for that).
 */
export function helpLine(flag: string, text: string, column: number): string {
  const lead = `  ${flag}`;
  return `${lead.length + 2 <= column ? lead.padEnd(column) : `${lead}  `}${text}`;
}

/** One `@x` command-line program: its name and version, and the answers every `@x` command gives alike. */
export interface CliProgram {
  /** The program's name, as typed (`"x-supervisor"`). */
  readonly name: string;
  /** The version of the package that ships it, read from its `package.json`. */
  version(): string;
  /**
   * Answers `--help` (the usage on stdout) or `--version` (`<name> <version>` on stdout); `undefined` when
   * neither was asked.
   *
   * @param flags - the parsed `help` and `version` flags
   * @param usage - the command's help
   * @returns `ExitCode.OK` when it answered
   */
  answer(
    flags: { help?: boolean | undefined; version?: boolean | undefined },
    usage: string,
  ): number | undefined;
  /**
   * Prints a usage error as GNU tools do: one line, `<name>[ <command>]: <message>`, then
   * `Try '<name>[ <command>] --help' for more information.`; with `json`, one JSON log line instead (pino's
   * shape: `level` 50, `time`, `name`, `msg`, and the advice as `hint`), for a command line that asked for
   * `--log-json`.
   *
   * @param error - what is wrong with the command line
   * @param command - the subcommand, when there is one and it is known
   * @param json - print the JSON line. Default `false`.
   * @returns `ExitCode.USAGE` (64)
   */
  usageError(error: UsageError, command?: string, json?: boolean): number;
}

/** Streams of a {@link CliProgram}: results on stdout, diagnostics on stderr. */
export interface CliStreams {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/**
 * The {@link CliProgram} named `name`, shipped by the package that holds `moduleUrl` (the nearest
 * `package.json` above it, whether the module runs from `src/` or `dist/`).
 *
 * @param name - the program's name (`"x-guard"`)
 * @param moduleUrl - `import.meta.url` of the program's module
 * @param streams - default: stdout's descriptor, written at once (`writeStdout`), and `process.stderr`
 */
export function cliProgram(name: string, moduleUrl: string, streams: CliStreams = {}): CliProgram {
  // Neither stream is created up front: --help and --version go straight to the descriptor (see stdio.ts)
  const out = (text: string) => (streams.stdout ? streams.stdout.write(text) : writeStdout(text));
  let version: string | undefined;
  const program: CliProgram = {
    name,
    version: () => {
      version ??= packageVersion(moduleUrl);
      return version;
    },
    answer(flags, usage) {
      if (flags.help) out(usage.endsWith("\n") ? usage : `${usage}\n`);
      else if (flags.version) out(`${name} ${program.version()}\n`);
      else return undefined;
      return ExitCode.OK;
    },
    usageError(error, command, json = false) {
      const who = command === undefined ? name : `${name} ${command}`;
      const message = error.message.replace(/\s*\n\s*/g, " ");
      const hint = `Try '${who} --help' for more information.`;
      (streams.stderr ?? process.stderr).write(
        json
          ? `${JSON.stringify({ level: 50, time: Date.now(), name: who, msg: message, code: error.code, hint })}\n`
          : `${who}: ${message}\n${hint}\n`,
      );
      return ExitCode.USAGE;
    },
  };
  return program;
}

/** The `version` of the nearest `package.json` at or above the directory of `moduleUrl`. */
function packageVersion(moduleUrl: string): string {
  // Loaded here rather than imported (see command-line.ts): only --version needs them.
  const { readFileSync } = process.getBuiltinModule("node:fs");
  const { dirname, join } = process.getBuiltinModule("node:path");
  const { fileURLToPath } = process.getBuiltinModule("node:url");
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    try {
      const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        version?: unknown;
      };
      return typeof version === "string" ? version : "unknown";
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const parent = dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}
