// The README's runnable example, run as users run it: a child process over the package's own entry point.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect, it } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

it("examples/two-streams.ts pauses the orders during the outage and names the offset to reprocess", async () => {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--conditions=@x/source", "--import", tsx, join(packageDir, "examples", "two-streams.ts")],
      { cwd: packageDir, timeout: 60_000 },
      (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
    );
  });
  const lines = stdout.trim().split("\n");
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
