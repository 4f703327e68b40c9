import { MAX_DURATION_MS } from "@x/core/internal";
import { afterEach, describe, expect, it, vi } from "vitest";
import { waitLong } from "./long-timer.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("waitLong", () => {
  it("waits longer than one timer can, in steps, and calls fn once at the end", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    waitLong(3 * MAX_DURATION_MS + 5, fn); // about 74 days: x-guard 74d
    vi.advanceTimersByTime(3 * MAX_DURATION_MS);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(4);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * MAX_DURATION_MS);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("is cancelled at any step", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const cancel = waitLong(2 * MAX_DURATION_MS, fn);
    vi.advanceTimersByTime(MAX_DURATION_MS + 1);
    cancel();
    vi.advanceTimersByTime(4 * MAX_DURATION_MS);
    expect(fn).not.toHaveBeenCalled();
  });
});
