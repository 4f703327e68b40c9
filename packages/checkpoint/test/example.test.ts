// The README's runnable example, run as users run it: a child process over the package's own entry point.
import { expect, it } from "vitest";
import { runExample } from "./run-example.js";

it("examples/two-streams.ts pauses the orders during the outage and names the offset to reprocess", async () => {
  const lines = await runExample("two-streams.ts");
  const down = lines.indexOf("prices down: last price at 10:04, orders paused");
  const recovered = lines.findIndex((line) =>
    line.startsWith("prices caught up at 10:16: reprice orders from offset 15"),
  );
  expect(down).toBeGreaterThan(0);
  expect(recovered).toBeGreaterThan(down);
  // Paused: no order between the downtime and the recovery, only late prices.
  expect(lines.slice(down + 1, recovered).every((line) => line.startsWith("late price"))).toBe(true);
  expect(lines.filter((line) => line.startsWith("order "))).toHaveLength(21);
  expect(lines[lines.indexOf("order 16 at 10:16 priced 116")]).toBeDefined();
  expect(lines.at(-1)).toMatch(/^done \{"state":\{"offset":20\}/);
});
