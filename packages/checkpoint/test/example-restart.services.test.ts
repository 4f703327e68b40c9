// The restart example on Redis, run as users run it: two real processes, one checkpoint file.
import { requireService } from "@x/test-support/services";
import { beforeAll, expect, it } from "vitest";
import { runExample } from "./run-example.js";

beforeAll(() => requireService("Redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379"));

it("examples/restart-redis.ts resumes both streams where the checkpoint says, with no false downtime", async () => {
  const lines = await runExample("restart-redis.ts");
  const restart = lines.indexOf("restarted: orders from 10:10, prices from 10:30");
  expect(restart, lines.join("\n")).toBeGreaterThan(0);
  // The dependency resumes at its last price, so its marker never goes back: no downtime is reported.
  expect(lines[restart + 1]).toBe("first price heard at 10:30");
  expect(lines.filter((line) => line.startsWith("prices down"))).toEqual([]);
  const orders = (part: string[]) =>
    part.filter((line) => line.startsWith("order ")).map((line) => line.split(" ")[1]);
  const numbers = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
  expect(orders(lines.slice(0, restart))).toEqual(numbers(0, 10));
  // The last order pulsed before the restart is processed again (the position is inclusive), then the rest.
  expect(orders(lines.slice(restart))).toEqual(numbers(10, 20));
  expect(lines.at(-1)).toBe("done");
});
