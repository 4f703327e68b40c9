// The two-streams example on Redis, run as users run it.
import { requireService } from "@x/test-support/services";
import { beforeAll, expect, it } from "vitest";
import { runExample } from "./run-example.js";

beforeAll(() => requireService("Redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379"));

it("examples/two-streams-redis.ts pauses the orders on Redis and replays them from the checkpointed order", async () => {
  const lines = await runExample("two-streams-redis.ts");
  const down = lines.indexOf(
    "prices down: last price at 10:04, orders paused (Redis delivered 21 orders so far)",
  );
  const up = lines.findIndex((line) =>
    line.startsWith("prices caught up at 10:11: reprice orders from 10:10,"),
  );
  expect(down, lines.join("\n")).toBeGreaterThan(0);
  expect(up).toBeGreaterThan(down);
  // Paused: only late prices between the downtime and the recovery, and no delivery from Redis meanwhile.
  expect(lines.slice(down + 1, up).every((line) => line.startsWith("late price"))).toBe(true);
  expect(lines[up]).toMatch(/Redis delivered 21 orders so far$/);
  expect(lines[up + 1]).toBe("order 10 at 10:10 priced 110");
  // Every later outage pauses and replays the same way; the last order is processed.
  const episodes = lines.filter(
    (line) => line.startsWith("prices down") || line.startsWith("prices caught up"),
  );
  for (let index = 0; index < episodes.length; index += 2)
    expect(episodes[index + 1]?.split("delivered ")[1]).toBe(
      episodes[index]!.split("delivered ")[1]!.replace(")", ""),
    );
  expect(lines.filter((line) => line.startsWith("order ")).at(-1)).toBe(
    lines.find((line) => line.startsWith("order 20 ")),
  );
  expect(lines.at(-1)).toMatch(/^done: Redis delivered \d+ orders in all$/);
});
