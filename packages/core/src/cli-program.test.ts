import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { cliProgram, infoFlagOptions, infoFlagsHelp } from "./cli-program.js";
import { parseCommandLine, UsageError } from "./command-line.js";

function sink() {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

const ownVersion = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;

describe("cliProgram", () => {
  const make = () => {
    const [out, err] = [sink(), sink()];
    const program = cliProgram("x-demo", import.meta.url, { stdout: out.stream, stderr: err.stream });
    return { program, out, err };
  };

  it("answers --version with the name and the version of the package that holds the module", () => {
    const { program, out } = make();
    expect(program.answer({ version: true }, "Usage: x-demo")).toBe(0);
    expect(out.text()).toBe(`x-demo ${ownVersion}\n`);
    expect(program.version()).toBe(ownVersion);
  });

  it("answers --help with the usage on stdout, and nothing else when neither was asked", () => {
    const { program, out } = make();
    expect(program.answer({ help: true, version: true }, "Usage: x-demo [options]")).toBe(0);
    expect(out.text()).toBe("Usage: x-demo [options]\n");
    expect(program.answer({}, "Usage")).toBeUndefined();
    expect(out.text()).toBe("Usage: x-demo [options]\n");
  });

  it("prints a usage error as one line and a pointer to the help, and returns 64", () => {
    const { program, out, err } = make();
    expect(program.usageError(new UsageError("unknown option --nope"), "serve")).toBe(64);
    expect(program.usageError(new UsageError("two\nlines"))).toBe(64);
    expect(err.text()).toBe(
      [
        "x-demo serve: unknown option --nope",
        "Try 'x-demo serve --help' for more information.",
        "x-demo: two lines",
        "Try 'x-demo --help' for more information.",
        "",
      ].join("\n"),
    );
    expect(out.text()).toBe("");
  });

  it("prints a usage error as one JSON log line when the command line asked for JSON logs", () => {
    const { program, err } = make();
    expect(program.usageError(new UsageError("two\nlines"), "serve", true)).toBe(64);
    expect(err.text().endsWith("\n")).toBe(true);
    expect(JSON.parse(err.text())).toEqual({
      level: 50,
      time: expect.any(Number),
      name: "x-demo serve",
      msg: "two lines",
      code: "ERR_X_USAGE",
      hint: "Try 'x-demo serve --help' for more information.",
    });
  });

  it("infoFlagOptions parse -h, --help and --version, and infoFlagsHelp aligns their lines", () => {
    const parse = (args: string[]) => parseCommandLine({ args, options: infoFlagOptions }).values;
    expect(parse(["-h"])).toEqual({ help: true });
    expect(parse(["--version"])).toEqual({ version: true });
    expect(infoFlagsHelp(10)).toBe("  -h, --help  show this help\n  --version  print the version and exit");
    expect(infoFlagsHelp(16)).toBe(
      "  -h, --help    show this help\n  --version     print the version and exit",
    );
  });
});
