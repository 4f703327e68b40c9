import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { testTempDir } from "@x/test-support/temp-dir";
import { waitFor } from "@x/test-support/wait-for";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "./cli-process.js";

let taken: Server | undefined;
afterEach(() => taken?.close());

/** A port another process listens on. */
async function portInUse(): Promise<number> {
  taken = createServer();
  await new Promise<void>((resolve) => taken!.listen(0, "127.0.0.1", resolve));
  return (taken.address() as { port: number }).port;
}

describe("a failed start", () => {
  it("removes the database, its lock and the fetcher directory it created", async () => {
    const root = testTempDir("x-supervisor-failed-");
    const port = await portInUse();
    const proc = runCli([
      "serve",
      join(root, "state.db"),
      join(root, "fetchers", "deep"),
      join(root, "s.sock"),
      "--http",
      `127.0.0.1:${port}`,
      "--log-json",
    ]);
    expect(await proc.exited).toBe(78);
    const lines = proc
      .stderr()
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({
      level: 50,
      kind: "in-use",
      msg: expect.stringContaining("EADDRINUSE"),
    });
    expect(readdirSync(root)).toEqual([]);
  });

  it("leaves what existed before as it was", async () => {
    const root = testTempDir("x-supervisor-failed-");
    const db = join(root, "state.db");
    const first = runCli(["serve", db, join(root, "fetchers"), join(root, "s.sock")]);
    // a database made by a daemon that ran and stopped
    await waitFor(() => first.stderr().includes("listening"), 20_000, "the first daemon");
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    writeFileSync(join(root, "fetchers", "f.1.txt"), "a 1 2\n");
    const before = readdirSync(root).sort();
    const port = await portInUse();
    const proc = runCli(["serve", db, join(root, "fetchers"), join(root, "s.sock"), "--http", `${port}`]);
    expect(await proc.exited).toBe(78);
    expect(readdirSync(root).sort()).toEqual(before);
    expect(existsSync(join(root, "fetchers", "f.1.txt"))).toBe(true);
    expect(readFileSync(join(root, "fetchers", "f.1.txt"), "utf8")).toBe("a 1 2\n");
  });
});
