import type { Logger } from "@x/core";
import { describe, expect, it, vi } from "vitest";
import { delay } from "../test/helpers.js";
import { clock } from "./clock.js";
import { deadlines, type Timed } from "./deadlines.js";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A queue entry that records when it came due. */
function entry(name: string, fired: { name: string; at: number; dueAt: number }[]): Timed {
  const item: Timed = {
    dueAt: Number.NaN,
    queueIndex: -1,
    logger: silent,
    onDue(now) {
      fired.push({ name, at: now, dueAt: item.dueAt });
    },
  };
  return item;
}

/** Resolves once `count` entries have fired (polling real time). */
async function firedAll(fired: unknown[], count: number): Promise<void> {
  await vi.waitFor(() => expect(fired.length).toBe(count), { timeout: 10_000, interval: 5 });
}

describe("the deadline queue", () => {
  it("calls every entry back once its time has passed, in the order of their times", async () => {
    const fired: { name: string; at: number; dueAt: number }[] = [];
    const now = clock();
    const times = Array.from({ length: 200 }, (_, i) => now + 20 + ((i * 37) % 100));
    const items = times.map((at, i) => {
      const item = entry(String(i), fired);
      deadlines.schedule(item, at, now);
      return item;
    });
    // cancel every third: it never fires
    items.forEach((item, i) => {
      if (i % 3 === 0) deadlines.cancel(item);
    });
    const expected = items.filter((_, i) => i % 3 !== 0);
    await firedAll(fired, expected.length);
    await delay(30);
    expect(fired).toHaveLength(expected.length);
    for (const { at, dueAt } of fired) expect(at).toBeGreaterThanOrEqual(dueAt);
    const dues = fired.map((f) => f.dueAt);
    expect(dues).toEqual([...dues].sort((a, b) => a - b));
    expect(new Set(fired.map((f) => f.name))).toEqual(
      new Set(items.map((_, i) => String(i)).filter((_, i) => i % 3 !== 0)),
    );
    expect(items.every((item) => item.queueIndex === -1)).toBe(true);
  });

  it("keeps an entry's earlier time when scheduled for later, and moves it when scheduled for earlier", async () => {
    const fired: { name: string; at: number; dueAt: number }[] = [];
    const now = clock();
    const later = entry("later", fired);
    const earlier = entry("earlier", fired);
    deadlines.schedule(later, now + 40, now);
    deadlines.schedule(later, now + 5_000, now); // lazy: it still comes due at 40 ms
    deadlines.schedule(earlier, now + 5_000, now);
    deadlines.schedule(earlier, now + 20, now); // moved forward
    await firedAll(fired, 2);
    expect(fired.map((f) => f.name)).toEqual(["earlier", "later"]);
    expect(fired[1]!.at - now).toBeLessThan(2_000);
  });

  it("re-arms after fake timers came and went: an entry never waits for a timer that cannot fire", async () => {
    const fired: { name: string; at: number; dueAt: number }[] = [];
    vi.useFakeTimers();
    const stale = entry("stale", fired);
    try {
      deadlines.schedule(stale, clock() + 10, clock()); // armed with the fake setTimeout
    } finally {
      vi.useRealTimers();
    }
    deadlines.cancel(stale);
    const now = clock();
    deadlines.schedule(entry("real", fired), now + 20, now);
    await firedAll(fired, 1);
    expect(fired[0]!.name).toBe("real");
  });
});
