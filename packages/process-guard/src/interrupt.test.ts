import { describe, expect, it } from "vitest";
import { ErrorCode, ExecutionTimeout, GuardError, MemoryLimitExceeded } from "./errors.js";
import { causeChain, interruptOf, isInterrupt, MAX_CAUSE_DEPTH } from "./interrupt.js";

const timeout = () => new ExecutionTimeout({ level: 0, limitMs: 100, elapsedMs: 101 });
const abortError = (cause: unknown) => {
  const error = new Error("This operation was aborted", { cause });
  error.name = "AbortError";
  return error;
};
/** `depth` wrappers around `inner`: depth 0 is `inner` itself. */
const wrapped = (inner: unknown, depth: number): unknown => {
  let error = inner;
  for (let i = 0; i < depth; i++) error = new Error(`wrapper ${i}`, { cause: error });
  return error;
};

describe("isInterrupt and interruptOf", () => {
  it("recognise a guard's error itself", () => {
    const time = timeout();
    const memory = new MemoryLimitExceeded({ level: 1, limitBytes: 1, observedBytes: 2, metric: "rss" });
    expect(isInterrupt(time)).toBe(true);
    expect(interruptOf(time)).toBe(time);
    expect(isInterrupt(memory)).toBe(true);
    expect(interruptOf(memory)).toBe(memory);
  });

  it("see through an AbortError whose cause is the guard's error, and through nested causes", () => {
    const time = timeout();
    expect(isInterrupt(abortError(time))).toBe(true);
    expect(interruptOf(abortError(time))).toBe(time);
    expect(interruptOf(new Error("step failed", { cause: abortError(time) }))).toBe(time);
  });

  it(`follow at most ${MAX_CAUSE_DEPTH} cause links, so cycles and endless chains end`, () => {
    const time = timeout();
    expect(interruptOf(wrapped(time, MAX_CAUSE_DEPTH))).toBe(time);
    expect(interruptOf(wrapped(time, MAX_CAUSE_DEPTH + 1))).toBeUndefined();
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(isInterrupt(a)).toBe(false);
    expect([...causeChain(a)]).toHaveLength(MAX_CAUSE_DEPTH + 1);
  });

  it("are false for other errors, other guard errors and non-errors, and never throw", () => {
    expect(isInterrupt(new Error("plain"))).toBe(false);
    expect(isInterrupt(abortError(new Error("another reason")))).toBe(false);
    expect(isInterrupt(abortError(undefined))).toBe(false);
    expect(isInterrupt(new GuardError(ErrorCode.INVALID_OPTION, "bad option"))).toBe(false);
    expect(isInterrupt(new GuardError(ErrorCode.NO_CONTEXT, "outside"))).toBe(false);
    for (const value of [undefined, null, "ERR_X_GUARD_TIMEOUT", 124, { code: ErrorCode.TIMEOUT }]) {
      expect(isInterrupt(value)).toBe(false);
    }
    const hostile = {
      get cause(): unknown {
        throw new Error("getter");
      },
    };
    expect(isInterrupt(hostile)).toBe(false);
  });

  it("recognise an interrupt from another installed copy of the package (by the XError brand and code)", () => {
    const foreign = Object.defineProperty(
      { name: "ExecutionTimeout", code: ErrorCode.TIMEOUT, message: "from another copy" },
      Symbol.for("@x/core.XError"),
      { value: true },
    );
    expect(foreign).not.toBeInstanceOf(GuardError);
    expect(isInterrupt(abortError(foreign))).toBe(true);
    expect(interruptOf(abortError(foreign))).toBe(foreign);
  });
});
