import { describe, expect, it } from "vitest";
import { getopt, type OptionSpec } from "./getopt.js";
import { parseTimeoutDuration, parseTimeoutSignal, signalName } from "./timeout-syntax.js";

describe("parseTimeoutDuration: strtod, then one suffix", () => {
  it.each([
    ["1e-1", 100],
    ["1e2", 100_000],
    ["2.34e+5d", 2.34e5 * 86_400_000],
    [" +1.", 1_000],
    [".5m", 30_000],
    ["0x1p-2", 250],
    ["0x.8", 500],
    ["1e-10000", 0],
    ["inf", Number.POSITIVE_INFINITY],
    ["INFINITYh", Number.POSITIVE_INFINITY],
    ["30d", 2_592_000_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseTimeoutDuration(text)).toBe(ms);
  });

  it.each(["", "x", "1e", "1,5", "nan", "-1", "1.5x", "1ss", "- 1"])("refuses %j as timeout does", (text) => {
    expect(() => parseTimeoutDuration(text)).toThrow(`invalid time interval '${text}'`);
  });
});

describe("parseTimeoutSignal: operand2sig", () => {
  it.each([
    ["0", 0, "EXIT"],
    ["exit", 0, "EXIT"],
    ["RTMIN", 34, "RTMIN"],
    ["rtmin+1", 35, "RTMIN+1"],
    ["SIGRTMAX", 64, "RTMAX"],
    ["RTMAX-1", 63, "RTMAX-1"],
    ["64", 64, "RTMAX"],
    ["137", 9, "KILL"],
    ["sigint", 2, "INT"],
    ["CLD", 17, "CHLD"],
  ])("%s is %d (%s)", (text, number, name) => {
    expect(parseTimeoutSignal(text)).toBe(number);
    expect(signalName(number)).toBe(name);
  });

  it.each(["65", "128", "256", "FOO", "RTMIN+31", "RTMIN-1", "RTMAX+1", "1x"])("refuses %s", (text) => {
    expect(() => parseTimeoutSignal(text)).toThrow(`'${text}': invalid signal`);
  });
});

describe("getopt: getopt_long with +", () => {
  const specs: OptionSpec[] = [
    { long: "preserve-status", takesValue: false },
    { long: "progress-on-output", takesValue: false },
    { long: "signal", short: "s", takesValue: true },
    { long: "verbose", short: "v", takesValue: false },
  ];

  it("takes prefixes, clusters, attached values, and stops at the first operand or --", () => {
    expect(getopt(["--pres", "--sig=INT", "-vsHUP", "-s", "TERM", "5", "-v"], specs)).toEqual({
      options: [
        { long: "preserve-status", value: undefined },
        { long: "signal", value: "INT" },
        { long: "verbose", value: undefined },
        { long: "signal", value: "HUP" },
        { long: "signal", value: "TERM" },
      ],
      operands: ["5", "-v"],
    });
    expect(getopt(["--", "-v"], specs).operands).toEqual(["-v"]);
    expect(getopt(["-", "x"], specs).operands).toEqual(["-", "x"]);
  });

  it.each([
    [["--p"], "option '--p' is ambiguous; possibilities: '--preserve-status' '--progress-on-output'"],
    [["--foo=1"], "unrecognized option '--foo=1'"],
    [["-x"], "invalid option -- 'x'"],
    [["--sig"], "option '--signal' requires an argument"],
    [["-s"], "option requires an argument -- 's'"],
    [["--verbose=1"], "option '--verbose' doesn't allow an argument"],
  ])("%j: %s", (args, message) => {
    expect(() => getopt(args, specs)).toThrow(message);
  });
});
