import { describe, expect, it } from "vitest";
import { WriteHistory } from "./write-checker.js";

describe("WriteHistory", () => {
  it("reports nothing wrong when every confirmed item is stored once with its value", () => {
    const history = new WriteHistory<bigint>();
    for (const key of ["a", "b", "c"]) history.sent(key, 1n);
    history.sent("a", 1n); // a retry
    history.confirmed(["a", "b"]);
    const check = history.check([
      ["a", 1n],
      ["b", 1n],
      ["c", 1n],
    ]);
    expect(check).toMatchObject({
      items: 3,
      confirmed: 2,
      stored: 3,
      lost: [],
      duplicated: [],
      unexpected: [],
    });
    expect(check.recovered).toEqual(["c"]);
    expect(check.ok).toBe(true);
    expect(check.summary()).toBe(
      "lost 0, duplicated 0, unexpected 0 (items 3, confirmed 2, recovered 1, stored 3)",
    );
  });

  it("finds lost, duplicated and unexpected items, and a confirmed item stored with another value", () => {
    const history = new WriteHistory<string>();
    for (const key of ["a", "b", "c", "d"]) history.sent(key, `v${key}`);
    history.confirmed(["a", "b", "c"]);
    const check = history.check([
      ["a", "va"],
      ["a", "va"], // stored twice
      ["c", "wrong"], // confirmed, stored with a value never sent
      ["z", "vz"], // never sent
    ]);
    expect(check.lost).toEqual(["b", "c"]);
    expect(check.duplicated).toEqual(["a"]);
    expect(check.unexpected).toEqual(["c", "z"]);
    expect(check.recovered).toEqual([]);
    expect(check.ok).toBe(false);
    expect(check.summary()).toMatch(/^lost 2, duplicated 1, unexpected 2 \(items 4, confirmed 3/);
  });

  it("compares values with the given function, and refuses a history it could not check", () => {
    const history = new WriteHistory<{ date: bigint }>((x, y) => x.date === y.date);
    history.sent("a", { date: 5n });
    history.sent("a", { date: 5n });
    expect(() => history.sent("a", { date: 6n })).toThrow("sent with two values");
    expect(() => history.confirmed(["b"])).toThrow("never sent");
    history.confirmed(["a"]);
    expect(history.check([["a", { date: 5n }]]).ok).toBe(true);
    expect(history.check([["a", { date: 6n }]]).lost).toEqual(["a"]);
  });
});
