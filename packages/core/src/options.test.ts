import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger.js";
import { isLogger, loggerOption } from "./logger-option.js";
import { describeValue, optionError, parseOptions } from "./options.js";
import * as v from "./schema/v.js";
import { XError } from "./x-error.js";

class PackageError extends XError {}

const schema = v
  .object({
    timeout: v.number({ error: "a finite number of seconds ≥ 0" }).min(0, "a finite number of seconds ≥ 0"),
    retries: v.number().int().min(0).default(3),
    nested: v.object({ name: v.string().min(1, "a non-empty string") }).optional(),
  })
  .strict();

function caught(fn: () => unknown): XError {
  try {
    fn();
  } catch (error) {
    if (XError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a throw");
}

describe("describeValue", () => {
  it("renders values readably and cuts long ones", () => {
    expect(describeValue("a")).toBe('"a"');
    expect(describeValue(-1)).toBe("-1");
    expect(describeValue(Number.NaN)).toBe("NaN");
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue([])).toBe("[]");
    expect(describeValue(["a", 1])).toBe('["a",1]');
    expect(describeValue({ a: 1n })).toBe('{"a":"1n"}');
    expect(describeValue(function named() {})).toBe("[function named]");
    expect(describeValue(Symbol("s"))).toBe("Symbol(s)");
    expect(describeValue("x".repeat(200))).toHaveLength(80);
  });
});

describe("optionError", () => {
  it("names the option, the value and what was expected", () => {
    const error = optionError("ERR_X_DEMO_OPTIONS", "timeout", -1, "a number ≥ 0", PackageError);
    expect(error).toBeInstanceOf(PackageError);
    expect(error.code).toBe("ERR_X_DEMO_OPTIONS");
    expect(error.message).toBe("invalid option timeout: -1 (expected a number ≥ 0)");
  });
});

describe("parseOptions", () => {
  it("returns the parsed options with defaults", () => {
    expect(parseOptions(schema, { timeout: 1 }, "ERR_X_DEMO_OPTIONS")).toEqual({ timeout: 1, retries: 3 });
  });

  it("throws the package's error naming the option and the value, with the schema error as cause", () => {
    const error = caught(() => parseOptions(schema, { timeout: -1 }, "ERR_X_DEMO_OPTIONS", PackageError));
    expect(error).toBeInstanceOf(PackageError);
    expect(error.code).toBe("ERR_X_DEMO_OPTIONS");
    expect(error.message).toBe("invalid option timeout: -1 (expected a finite number of seconds ≥ 0)");
    expect(error.cause).toBeInstanceOf(v.SchemaError);
  });

  it("names nested options by their path", () => {
    const error = caught(() =>
      parseOptions(schema, { timeout: 1, nested: { name: "" } }, "ERR_X_DEMO_OPTIONS"),
    );
    expect(error.message).toBe('invalid option nested.name: "" (expected a non-empty string)');
  });

  it("names an unknown option and suggests the nearest known one", () => {
    const error = caught(() => parseOptions(schema, { timeout: 1, timout: 2 }, "ERR_X_DEMO_OPTIONS"));
    expect(error.message).toBe("unknown option timout: 2; did you mean timeout?");
    expect(error.code).toBe("ERR_X_DEMO_OPTIONS");
    expect(error.cause).toBeInstanceOf(v.SchemaError);
    const strict = v.strictObject({ nested: v.strictObject({ name: v.string().optional() }) });
    const nested = caught(() => parseOptions(strict, { nested: { nmae: "a" } }, "ERR_X_DEMO_OPTIONS"));
    expect(nested.message).toBe('unknown option nested.nmae: "a"; did you mean nested.name?');
  });

  it("lists the options when no known one is near", () => {
    const error = caught(() => parseOptions(schema, { timeout: 1, colour: "red" }, "ERR_X_DEMO_OPTIONS"));
    expect(error.message).toBe('unknown option colour: "red" (the options are timeout, retries, nested)');
  });

  it("shows empty and blank strings quoted", () => {
    const error = caught(() =>
      parseOptions(schema, { timeout: 1, nested: { name: "" } }, "ERR_X_DEMO_OPTIONS"),
    );
    expect(error.message).toContain('nested.name: ""');
    expect(describeValue(" \t")).toBe('" \\t"');
  });

  it("rejects a non-object as a whole", () => {
    const error = caught(() => parseOptions(schema, 5, "ERR_X_DEMO_OPTIONS"));
    expect(error.message).toMatch(/^invalid option options: 5 /);
  });
});

describe("loggerOption", () => {
  const options = v.object({ logger: loggerOption });

  it("accepts any object with the four level functions and defaults to the silent logger", () => {
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    expect(parseOptions(options, { logger }, "ERR_X_DEMO_OPTIONS").logger).toBe(logger);
    expect(parseOptions(options, {}, "ERR_X_DEMO_OPTIONS").logger).toBe(silentLogger);
    expect(isLogger(console)).toBe(true);
  });

  it("rejects anything else, naming the option", () => {
    for (const bad of [console.log, { info() {} }, null, "pino"]) {
      expect(isLogger(bad)).toBe(false);
      const error = caught(() => parseOptions(options, { logger: bad }, "ERR_X_DEMO_OPTIONS"));
      expect(error.message).toMatch(
        /^invalid option logger: .* \(expected a logger with debug, info, warn and error functions\)$/,
      );
    }
  });
});
