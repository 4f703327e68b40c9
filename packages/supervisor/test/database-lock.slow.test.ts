import { existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { startSupervisor } from "../src/index.js";
import { runCli, serve } from "./cli-process.js";
import { paths, start } from "./harness.js";

describe("one daemon per database", () => {
  it("refuses a second Supervisor on the same database, and takes the database once the first has closed", async () => {
    const p = paths();
    const { sup } = await start(p);
    const second = { db: p.db, fetchersDir: p.fetchersDir, socket: join(p.root, "other.sock") };
    await expect(startSupervisor(second)).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_DATABASE_IN_USE",
      message: expect.stringContaining(p.db),
    });
    expect(existsSync(second.socket)).toBe(false);
    await sup.close();
    await using next = await startSupervisor(second);
    expect(next.stats().dispatched).toBe(0);
  });

  it("x-supervisor serve exits 78 naming the database while another daemon runs on it", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "hello 1 2\n");
    const first = serve(p);
    await waitFor(() => first.stderr().includes("listening"), 20_000, "the first daemon");
    const second = runCli(["serve", p.db, p.fetchersDir, join(p.root, "other.sock")]);
    expect(await second.exited).toBe(78);
    expect(second.stderr()).toContain(`another daemon is using the database ${p.db}`);
    expect(existsSync(join(p.root, "other.sock"))).toBe(false);
    expect(first.child.exitCode).toBe(null);
  });

  it("refuses a second daemon whatever the name of the database: same arguments, symlink, .., hard link", async () => {
    const p = paths();
    const first = serve(p);
    await waitFor(() => first.stderr().includes("listening"), 20_000, "the first daemon");
    mkdirSync(join(p.root, "sub"));
    symlinkSync(p.db, join(p.root, "symlink.db"));
    linkSync(p.db, join(p.root, "hardlink.db"));
    const names = [
      p.db,
      join(p.root, "symlink.db"),
      `${join(p.root, "sub")}/../${basename(p.db)}`,
      join(p.root, "hardlink.db"),
    ];
    for (const [i, db] of names.entries()) {
      // the first with the very same arguments (its socket too); the others with a socket of their own
      const socket = i === 0 ? p.socket : join(p.root, `other${i}.sock`);
      const second = runCli(["serve", db, p.fetchersDir, socket]);
      expect(await second.exited, db).toBe(78);
      expect(second.stderr(), db).toMatch(
        i < 3 ? `another daemon is using the database ${db}` : `the database ${db} has 2 names (hard links)`,
      );
      expect(second.stderr(), db).toContain("code=ERR_X_SUPERVISOR_DATABASE_IN_USE");
    }
    expect(first.child.exitCode).toBe(null);
  });

  it("a daemon killed with SIGKILL leaves no lock behind: the next one starts on the database", async () => {
    const p = paths();
    const killed = serve(p);
    await waitFor(() => killed.stderr().includes("listening"), 20_000, "the first daemon");
    killed.child.kill("SIGKILL");
    await killed.exited;
    const next = serve(p);
    await waitFor(
      () => next.stderr().includes("listening") || next.child.exitCode !== null,
      20_000,
      "the next daemon",
    );
    expect(next.stderr()).toContain("listening");
  });
});
