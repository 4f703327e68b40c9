import { describe, expect, it } from "vitest";
import { InFlightWindow } from "./in-flight.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("InFlightWindow", () => {
  it("never holds more than its limit, and lets waiters in as room comes back", async () => {
    const window = new InFlightWindow(2_500);
    const never = () => false;
    expect(await window.acquire(1_000, never)).toBe(true);
    expect(await window.acquire(1_000, never)).toBe(true);
    let third = false;
    const waiting = window.acquire(1_000, never).then((ok) => {
      third = ok;
    });
    await tick();
    expect(third).toBe(false);
    expect(window.held).toBe(2_000);
    expect(window.waiting).toBe(1);
    window.release(1_000);
    await waiting;
    expect(third).toBe(true);
    expect(window.held).toBe(2_000);
    expect(window.peak).toBe(2_000);
  });

  it("lets a message larger than the limit go alone", async () => {
    const window = new InFlightWindow(100);
    expect(await window.acquire(1_000, () => false)).toBe(true);
    let second = false;
    const waiting = window
      .acquire(1, () => false)
      .then((ok) => {
        second = ok;
      });
    await tick();
    expect(second).toBe(false);
    window.release(1_000);
    await waiting;
    expect(second).toBe(true);
  });

  it("gives up without taking room once cancelled", async () => {
    const window = new InFlightWindow(10);
    await window.acquire(10, () => false);
    let cancelled = false;
    const waiting = window.acquire(5, () => cancelled);
    cancelled = true;
    window.wake();
    expect(await waiting).toBe(false);
    expect(window.held).toBe(10);
  });

  it("bounds many concurrent writers to the limit", async () => {
    const window = new InFlightWindow(5_000);
    const answered: Array<() => void> = [];
    const writers = Array.from({ length: 8 }, async () => {
      for (let m = 0; m < 20; m++) {
        await window.acquire(700, () => false);
        expect(window.held).toBeLessThanOrEqual(5_000);
        answered.push(() => window.release(700));
      }
    });
    const all = Promise.all(writers);
    while (window.waiting > 0 || answered.length > 0) {
      answered.shift()?.();
      await tick();
    }
    await all;
    expect(window.peak).toBeLessThanOrEqual(5_000);
    expect(window.peak).toBeGreaterThan(4_000);
  });
});
