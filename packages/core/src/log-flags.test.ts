import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "./command-line.js";
import {
  asksForJsonLogs,
  createCommandLogger,
  logFlagOptions,
  logFlagsHelp,
  readLogFlags,
} from "./log-flags.js";
import { XError } from "./x-error.js";

const read = (args: string[]) => readLogFlags(parseCommandLine({ args, options: logFlagOptions }).values);

describe("log flags", () => {
  it("default to info, plain text", () => {
    expect(read([])).toEqual({ level: "info", json: false, deprecated: [] });
  });

  it("read --log-level and --log-json", () => {
    expect(read(["--log-level", "silent", "--log-json"])).toEqual({
      level: "silent",
      json: true,
      deprecated: [],
    });
    expect(read(["--log-level=debug"]).level).toBe("debug");
  });

  it("accept --json-logs as a deprecated spelling of --log-json", () => {
    expect(read(["--json-logs"])).toEqual({ level: "info", json: true, deprecated: ["--json-logs"] });
  });

  it.each(["INFO", "toString", "__proto__", "trace", ""])(
    "refuse the level %j with a UsageError",
    (level) => {
      let thrown: unknown;
      try {
        read(["--log-level", level]);
      } catch (error) {
        thrown = error;
      }
      expect(XError.is(thrown, "ERR_X_USAGE")).toBe(true);
      expect((thrown as Error).message).toBe(
        `--log-level expects debug, info, warn, error or silent, got ${JSON.stringify(level)}`,
      );
    },
  );

  it("give a logger that warns once about each deprecated flag, in the chosen format", () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    const logger = createCommandLogger("x-demo", read(["--json-logs", "--json-logs"]), stream);
    logger.info("started");
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { level: 40, name: "x-demo", msg: "--json-logs is deprecated and will be removed: use --log-json" },
      { level: 30, name: "x-demo", msg: "started" },
    ]);
    createCommandLogger("x-demo", read(["--log-level", "error", "--json-logs"]), stream);
    expect(lines).toHaveLength(2);
  });

  it("have help lines aligned at the given column", () => {
    expect(logFlagsHelp(20).split("\n")).toEqual([
      "  --log-level LEVEL  debug, info, warn, error or silent (default info)",
      "  --log-json        log JSON lines (pino's shape) instead of plain text",
    ]);
  });
});

describe("asksForJsonLogs", () => {
  it("finds --log-json (or --json-logs) among a command's own arguments, never after --", () => {
    expect(asksForJsonLogs(["serve", "--log-json", "--bad"])).toBe(true);
    expect(asksForJsonLogs(["--json-logs"])).toBe(true);
    expect(asksForJsonLogs(["sock", "--", "job", "--log-json"])).toBe(false);
    expect(asksForJsonLogs(["--log-jsonx", "--json"])).toBe(false);
  });
});
