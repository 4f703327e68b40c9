import { describe, expect, it } from "vitest";
import { parseFetcherLine, sampleBytes } from "./fetcher-line.js";
import { parseFetcherFileName } from "./fetcher-name.js";
import { parseCommand, parseReply } from "./protocol.js";

describe("parseFetcherFileName", () => {
  it.each([
    ["f1.100.txt", { kind: "fetcher", fetcher: "f1", runStarted: 100, isComplete: true }],
    ["f1.100.txt.part", { kind: "fetcher", fetcher: "f1", runStarted: 100, isComplete: false }],
    ["f1.0100.txt", { kind: "fetcher", fetcher: "f1", runStarted: 100, isComplete: true }],
    ["f1.-5.txt", { kind: "fetcher", fetcher: "f1", runStarted: -5, isComplete: true }],
    ["f1.+5.txt", { kind: "fetcher", fetcher: "f1", runStarted: 5, isComplete: true }],
    ["bad.name.txt", { kind: "bad-run" }],
    ["f1.x.txt.part", { kind: "bad-run" }],
    ["f1..txt", { kind: "bad-run" }],
    ["f1.1e3.txt", { kind: "bad-run" }],
    ["f1.99999999999999999.txt", { kind: "bad-run" }],
    ["f1.100.txt.bak", { kind: "other" }],
    ["a.b.1.txt", { kind: "other" }],
    ["noext", { kind: "other" }],
    [".100.txt", { kind: "other" }],
    ["f1.100.TXT", { kind: "other" }],
  ])("%s", (name, expected) => {
    expect(parseFetcherFileName(name)).toEqual(expected);
  });
});

describe("parseFetcherLine", () => {
  const line = (s: string | number[]) =>
    parseFetcherLine(typeof s === "string" ? Buffer.from(s) : Buffer.from(s));
  it("trims, then splits at the first space; a tab is not a separator", () => {
    expect(line("alpha 1.0 1.1")).toEqual({ entry: ["alpha", "1.0 1.1"] });
    expect(line("bravo  0 1 ")).toEqual({ entry: ["bravo", " 0 1"] });
    expect(line("  charlie\t0 1")).toEqual({ entry: ["charlie\t0", "1"] });
    expect(line("echo 0 1\r")).toEqual({ entry: ["echo", "0 1"] });
  });
  it("rejects no space, bad UTF-8, an inner CR, and lines over 1 MiB", () => {
    expect(line("alpha ")).toEqual({ reject: "no-space" });
    expect(line("")).toEqual({ reject: "no-space" });
    expect(line([0x61, 0x20, 0xc3])).toEqual({ reject: "bad-utf8" });
    expect(line("a b\rc")).toEqual({ reject: "bad-cr" });
    expect(line(`a ${"x".repeat(1_048_574)}`)).toHaveProperty("entry");
    expect(line(`a ${"x".repeat(1_048_575)}`)).toEqual({ reject: "too-long" });
  });
  it("samples bytes printably", () => {
    expect(sampleBytes(Buffer.from([0x61, 0xff, 0x5c, 0x0a]))).toBe("a\\xff\\x5c\\x0a");
    expect(sampleBytes(Buffer.from("x".repeat(300)))).toBe(`${"x".repeat(200)}…`);
  });
});

describe("protocol", () => {
  it("parses READY and DONE, dropping one trailing CR", () => {
    expect(parseCommand(Buffer.from("READY"))).toEqual({ kind: "ready" });
    expect(parseCommand(Buffer.from("READY\r"))).toEqual({ kind: "ready" });
    expect(parseCommand(Buffer.from("READY\r\r"))).toEqual({ kind: "reject", reason: "unknown-command" });
    expect(parseCommand(Buffer.from("DONE a -1 x y"))).toEqual({ kind: "done", attrPath: "a", exitCode: -1 });
    expect(parseCommand(Buffer.from("DONE a 0\r"))).toEqual({ kind: "done", attrPath: "a", exitCode: 0 });
    expect(parseCommand(Buffer.from("DONE a 0x1"))).toEqual({ kind: "reject", reason: "bad-done" });
    expect(parseCommand(Buffer.from("DONE a "))).toEqual({ kind: "reject", reason: "bad-done" });
    expect(parseCommand(Buffer.from("DONEa 0"))).toEqual({ kind: "reject", reason: "unknown-command" });
  });
  it("parses replies: payload verbatim, NOJOBS, anything else is undefined", () => {
    expect(parseReply("JOB a  x y ")).toEqual({ attrPath: "a", payload: " x y " });
    expect(parseReply("JOB a ")).toEqual({ attrPath: "a", payload: "" });
    expect(parseReply("NOJOBS")).toBeNull();
    expect(parseReply("JOB a")).toBeUndefined();
    expect(parseReply("JOB  x")).toBeUndefined();
    expect(parseReply("nojobs")).toBeUndefined();
  });
});
