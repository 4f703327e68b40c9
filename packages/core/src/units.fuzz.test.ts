import { checkProperty, hostileString, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UsageError } from "./command-line.js";
import { MAX_DURATION_MS, parseDurationMs, parseSizeBytes } from "./units.js";

const isUsageError = (error: unknown) => error instanceof UsageError && error.code === "ERR_X_USAGE";

describe("duration and size parsers under fuzzing", () => {
  it("a duration is a timer's worth of milliseconds or a UsageError, for any string", async () => {
    await checkProperty(
      "core: command-line duration",
      fc.property(hostileString(), (text) => {
        const ms = parsesOrRejects(() => parseDurationMs("--timeout", text), isUsageError);
        if (ms !== undefined) expect(ms >= 0 && ms <= MAX_DURATION_MS).toBe(true);
      }),
    );
  });

  it("a size is a safe whole number of bytes or a UsageError, for any string", async () => {
    await checkProperty(
      "core: command-line size",
      fc.property(hostileString(), (text) => {
        const bytes = parsesOrRejects(() => parseSizeBytes("--max-memory", text), isUsageError);
        if (bytes !== undefined) expect(Number.isSafeInteger(bytes) && bytes >= 0).toBe(true);
      }),
    );
  });

  it("reads back every duration and size it could have been given", async () => {
    await checkProperty(
      "core: duration and size round trip",
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.constantFrom(["s", 1_000], ["m", 60_000], ["h", 3_600_000], ["d", 86_400_000]),
        fc.constantFrom(["K", 1024], ["M", 1024 ** 2], ["GiB", 1024 ** 3], ["b", 1]),
        (n, [durationUnit, msPerUnit], [sizeUnit, bytesPerUnit]) => {
          const ms = n * (msPerUnit as number);
          if (ms <= MAX_DURATION_MS) expect(parseDurationMs("--t", `${n}${durationUnit}`)).toBe(ms);
          expect(parseSizeBytes("--m", `${n}${sizeUnit}`)).toBe(n * (bytesPerUnit as number));
        },
      ),
    );
  });

  it("refuses durations a timer cannot wait and sizes beyond safe integers", () => {
    expect(() => parseDurationMs("--timeout", "25d")).toThrow(/longest timer/);
    expect(() => parseDurationMs("--timeout", "9".repeat(400))).toThrow(UsageError);
    expect(parseDurationMs("--timeout", "24d")).toBe(24 * 86_400_000);
    expect(() => parseSizeBytes("--max-memory", "9".repeat(400))).toThrow(/larger than any size/);
  });
});
