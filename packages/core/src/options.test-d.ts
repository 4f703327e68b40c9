import { describe, expectTypeOf, it } from "vitest";
import { type BackoffOptions, type Logger, type SleepOptions, sleep } from "./index.js";
import {
  ExitCode,
  loggerOption,
  parseCommandLine,
  parseDurationMs,
  parseOptions,
  parseSizeBytes,
  type ShutdownOptions,
  type StatusLine,
  type StatusLineOptions,
} from "./internal.js";
import * as v from "./schema/v.js";

/** The option names that end in `Ms` (durations). */
type MsKeys<T> = Extract<keyof T, `${string}Ms`>;

describe("parseOptions()", () => {
  it("returns the schema's output type, defaults applied", () => {
    const schema = v.strictObject({
      retries: v.number().int().default(5),
      delayMs: v.number().optional(),
      logger: loggerOption,
    });
    const parsed = parseOptions(schema, { retries: 3 }, "ERR_X_DEMO_OPTIONS");
    expectTypeOf(parsed).toEqualTypeOf<{ retries: number; delayMs?: number | undefined; logger: Logger }>();
    // The input is unknown: anything may be validated.
    expectTypeOf(parseOptions).parameter(1).toEqualTypeOf<unknown>();
  });

  it("loggerOption parses to a Logger, never undefined", () => {
    expectTypeOf<v.Output<typeof loggerOption>>().toEqualTypeOf<Logger>();
  });
});

describe("units", () => {
  it("parseDurationMs and parseSizeBytes read a flag's text into a number", () => {
    expectTypeOf(parseDurationMs).toEqualTypeOf<(option: string, text: string) => number>();
    expectTypeOf(parseSizeBytes).toEqualTypeOf<(option: string, text: string) => number>();
    // @ts-expect-error: the flag's name comes first
    parseDurationMs("90");
  });

  it("names every duration option of core in ms", () => {
    expectTypeOf<MsKeys<BackoffOptions>>().toEqualTypeOf<"initialMs" | "maxMs">();
    expectTypeOf<Required<BackoffOptions>[MsKeys<BackoffOptions>]>().toEqualTypeOf<number>();
    expectTypeOf<keyof StatusLineOptions>().toEqualTypeOf<"stream" | "intervalMs">();
    expectTypeOf<StatusLineOptions["intervalMs"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<keyof SleepOptions>().toEqualTypeOf<"signal" | "ref">();
    expectTypeOf(sleep).toEqualTypeOf<(ms: number, options?: SleepOptions) => Promise<void>>();
  });

  it("StatusLine is update/done with an enabled flag", () => {
    expectTypeOf<StatusLine>().toEqualTypeOf<{
      readonly enabled: boolean;
      update(text: string): void;
      done(text?: string): void;
    }>();
  });
});

describe("command-line helpers", () => {
  it("ExitCode holds literal statuses", () => {
    expectTypeOf(ExitCode).toEqualTypeOf<{
      readonly OK: 0;
      readonly FAILURE: 1;
      readonly USAGE: 64;
      readonly UNAVAILABLE: 69;
      readonly CONFIG: 78;
    }>();
  });

  it("parseCommandLine() keeps parseArgs' typed values", () => {
    const { values, positionals } = parseCommandLine({
      args: ["--json", "--prefix", "p", "db"],
      options: { json: { type: "boolean" }, prefix: { type: "string" } },
      allowPositionals: true,
    });
    expectTypeOf(values.json).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(values.prefix).toEqualTypeOf<string | undefined>();
    expectTypeOf(positionals).toEqualTypeOf<string[]>();
  });

  it("ShutdownOptions takes signal names", () => {
    expectTypeOf<ShutdownOptions["signals"]>().toEqualTypeOf<NodeJS.Signals[] | undefined>();
    // @ts-expect-error: not a signal name
    const bad: ShutdownOptions = { signals: ["SIGSTOPP"] };
    void bad;
  });
});
