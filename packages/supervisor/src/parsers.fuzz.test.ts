import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxLineBytes, parseFetcherLine } from "./fetcher-line.js";
import { completeFileName, parseFetcherFileName } from "./fetcher-name.js";
import { formatReply, parseCommand, parseReply } from "./protocol.js";

/** Bytes as a broken or hostile peer sends them: random bytes, and near misses of the real commands. */
const commandBytes = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .tuple(
      fc.constantFrom("READY", "DONE", "DONE ", "done", "READY\r", "DONE  ", "JOB"),
      fc.string({ unit: "binary", maxLength: 80 }),
      fc.constantFrom("", " ", "\r", " 0", " -1", " 1e3", " 99999999999999999999", " +7", " 0x1"),
    )
    .map(([head, middle, tail]) => Buffer.from(head + middle + tail)),
);

/** An attribute path the protocol can carry: non-empty, no space, no line break. */
const attrPath = fc.string({ unit: "binary", minLength: 1, maxLength: 60 }).filter((s) => !/[ \r\n]/.test(s));

describe("supervisor parsers under fuzzing", () => {
  it("a worker's command is READY, a well-formed DONE or a counted rejection, for any bytes", async () => {
    await checkProperty(
      "supervisor: protocol command",
      fc.property(commandBytes, (bytes) => {
        const command = parseCommand(Buffer.from(bytes));
        if (command.kind === "done") {
          expect(command.attrPath.length).toBeGreaterThan(0);
          expect(command.attrPath).not.toContain(" ");
          expect(Number.isSafeInteger(command.exitCode)).toBe(true);
        } else if (command.kind === "reject") {
          expect(["unknown-command", "bad-done"]).toContain(command.reason);
        }
      }),
    );
  });

  it("reads back every DONE a worker can send, and every reply the daemon writes", async () => {
    await checkProperty(
      "supervisor: protocol round trip",
      fc.property(
        attrPath,
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
        fc.string({ unit: "binary", maxLength: 200 }).filter((s) => !/[\r\n]/.test(s)),
        (attr, code, payload) => {
          expect(parseCommand(Buffer.from(`DONE ${attr} ${code}`))).toEqual({
            kind: "done",
            attrPath: attr,
            exitCode: code,
          });
          const reply = formatReply({ attrPath: attr, payload });
          expect(reply.endsWith("\n")).toBe(true);
          expect(parseReply(reply.slice(0, -1))).toEqual({ attrPath: attr, payload });
        },
      ),
    );
  });

  it("a fetcher line is an entry without line breaks or a named rejection, for any bytes", async () => {
    const lineBytes = fc.oneof(
      fc.uint8Array({ maxLength: 400 }),
      fc.string({ unit: "grapheme", maxLength: 100 }).map((s) => Buffer.from(s)),
      fc.constant(new Uint8Array(maxLineBytes + 1).fill(0x41)),
    );
    await checkProperty(
      "supervisor: fetcher line",
      fc.property(lineBytes, (bytes) => {
        const parsed = parseFetcherLine(bytes);
        if ("entry" in parsed) {
          const [attr, payload] = parsed.entry;
          expect(attr).not.toContain(" ");
          expect(`${attr} ${payload}`).not.toMatch(/[\r\n]/);
        } else {
          expect(["no-space", "too-long", "bad-utf8", "bad-cr"]).toContain(parsed.reject);
          if (bytes.length > maxLineBytes) expect(parsed.reject).toBe("too-long");
        }
      }),
    );
  });

  it("a directory entry is a fetcher file or ignored, and fetcher files are named back the same", async () => {
    const name = fc.oneof(
      fc.string({ unit: "binary", maxLength: 60 }),
      fc
        .tuple(
          fc.string({ maxLength: 10 }),
          fc.constantFrom("1", "-5", "+3", "00", "1e3", "9007199254740993", "", "x"),
          fc.constantFrom(".txt", ".txt.part", ".TXT", ".txt.part.part", ""),
        )
        .map(([stem, run, suffix]) => `${stem}.${run}${suffix}`),
    );
    await checkProperty(
      "supervisor: fetcher file name",
      fc.property(name, (text) => {
        const parsed = parseFetcherFileName(text);
        if (parsed.kind === "fetcher") {
          expect(parsed.fetcher).not.toContain(".");
          expect(Number.isSafeInteger(parsed.runStarted)).toBe(true);
          expect(parseFetcherFileName(completeFileName(parsed.fetcher, parsed.runStarted))).toEqual({
            ...parsed,
            isComplete: true,
          });
        }
      }),
    );
  });
});
