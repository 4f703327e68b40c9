import { describe, expect, it } from "vitest";
import { startTestFake } from "../../test/helpers.js";
import { ConnectionPool } from "./connection-pool.js";

describe("ConnectionPool", () => {
  it("lets `size` holders in at once and serves the others in arrival order", async () => {
    const pool = new ConnectionPool(2);
    const order: number[] = [];
    const first = await pool.acquire();
    const second = await pool.acquire();
    const waiting = [3, 4].map(async (n) => {
      const release = await pool.acquire();
      order.push(n);
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    first(); // a second call gives nothing back twice
    const third = await waiting[0];
    expect(order).toEqual([3]);
    second();
    (await waiting[1])?.();
    third?.();
    expect(order).toEqual([3, 4]);
  });
});

describe("the fake's write transactions", () => {
  it("run 2 at a time, and each GET record says how many rows it returned", async () => {
    const tables = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`S:T${i}`, { key: ["id"] }]));
    const fake = await startTestFake(tables);
    fake.writeDurationMs = 100;
    const started = performance.now();
    // Ten writes to ten tables: no conflicts, but at most two transactions at once (each 50–150 ms).
    await Promise.all(
      Object.keys(tables).map((table) =>
        fetch(`${fake.url}/entity/${table}`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: '[{"id":1}]',
        }).then((r) => r.text()),
      ),
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    await (await fetch(`${fake.url}/entity/S:T0`)).text();
    expect(fake.requests.at(-1)?.rows).toBe(1);
    expect(fake.requests.filter((r) => r.method === "POST").every((r) => r.rows === undefined)).toBe(true);
  });
});
