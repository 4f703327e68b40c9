import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { beforeAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

/** Runs the example as a real child process; `onLine` may signal it. */
function runExample(onLine?: (line: string, child: ReturnType<typeof spawn>) => void) {
  // Node itself (not the tsx CLI wrapper) gets the signal, as a deployed agent would.
  const child = spawn(
    process.execPath,
    ["--conditions=@x/source", "--import", "tsx", "examples/jobs-agent.ts"],
    {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    stdout += text;
    for (const line of text.split("\n")) if (line) onLine?.(line, child);
  });
  return new Promise<{ code: number | null; stdout: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout })),
  );
}

describe("the example agent", () => {
  beforeAll(() => requireService("RabbitMQ", AMQP_URL));

  it("finishes by itself with every job complete exactly once", async () => {
    const { code, stdout } = await runExample();
    expect(code).toBe(0);
    expect(stdout).toContain("change notices on RabbitMQ");
    expect(stdout).toContain("30/30 jobs complete, 0 claimed twice.");
    expect(stdout.match(/^agent-\d completed/gm)).toHaveLength(3);
  }, 60_000);

  it("stops gracefully on SIGINT and still prints who did what", async () => {
    const { code, stdout } = await runExample((line, child) => {
      if (line.startsWith("Fake ERMrest at")) setTimeout(() => child.kill("SIGINT"), 200);
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^agent-1 completed/m);
    expect(stdout).toMatch(/\d+\/30 jobs complete, 0 claimed twice\./);
  }, 60_000);
});
