import { UsageError } from "@x/core/internal";
import { checkProperty, hostileString, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseGuardArgs } from "./command.js";

const isUsageError = (error: unknown) => error instanceof UsageError;

/** Words of an x-guard command line: its options (whole, with `=`, misspelt), values, and anything else. */
const word = fc.oneof(
  fc.constantFrom(
    "--timeout",
    "--grace",
    "--max-memory",
    "--send-kill",
    "--progress-on-output",
    "--help",
    "-h",
    "--",
    "-",
    "--timeout=",
    "--send-kill=1",
    "--time",
    "-t",
  ),
  fc.constantFrom("10", "1.5m", "25d", "512M", "1e3", "-1", "0"),
  fc
    .tuple(fc.constantFrom("--timeout=", "--grace=", "--max-memory="), hostileString())
    .map(([a, b]) => a + b),
  hostileString(),
);

describe("x-guard's command line under fuzzing", () => {
  it("is parsed into usable limits or refused with a UsageError, for any words", async () => {
    await checkProperty(
      "process-guard: x-guard arguments",
      fc.property(fc.array(word, { maxLength: 8 }), (args) => {
        const line = parsesOrRejects(() => parseGuardArgs(args), isUsageError);
        if (line === undefined) return;
        for (const ms of [line.timeoutMs, line.gracePeriodMs])
          if (ms !== undefined) expect(Number.isFinite(ms) && ms >= 0).toBe(true);
        if (line.maxMemoryBytes !== undefined) expect(Number.isSafeInteger(line.maxMemoryBytes)).toBe(true);
        if (!line.help && line.command.length > 0)
          expect(args.slice(-line.command.length)).toEqual(line.command);
      }),
    );
  });
});
