import { chmodSync, existsSync, statSync } from "node:fs";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { startSupervisor } from "../src/index.js";
import { runCli } from "./cli-process.js";
import { paths, start } from "./harness.js";

// The database holds the queue's payloads and who ran what: nobody but the daemon's user reads it, unless asked.

const mode = (file: string) => statSync(file).mode & 0o777;
const files = (db: string) => [db, `${db}-wal`, `${db}-shm`, `${db}-lock`];

/** Sets the umask most systems start with, for the current test. */
function usualUmask(): void {
  const previous = process.umask(0o022);
  onTestFinished(() => {
    process.umask(previous);
  });
}

describe("the database's file modes", () => {
  it("creates the database, its -wal, -shm and lock files 0600 under umask 022", async () => {
    usualUmask();
    const p = paths();
    await start(p);
    for (const file of files(p.db)) expect([file, mode(file)]).toEqual([file, 0o600]);
  });

  it("takes dbMode, and leaves the mode of an existing database as it is", async () => {
    usualUmask();
    const p = paths();
    const sup = await startSupervisor({
      db: p.db,
      fetchersDir: p.fetchersDir,
      socket: p.socket,
      dbMode: 0o640,
    });
    for (const file of files(p.db)) expect([file, mode(file)]).toEqual([file, 0o640]);
    await sup.close();

    chmodSync(p.db, 0o660);
    const again = await startSupervisor({ db: p.db, fetchersDir: p.fetchersDir, socket: p.socket });
    onTestFinished(() => again.close());
    expect(mode(p.db)).toBe(0o660);
  });

  it("refuses a dbMode that is not a file mode", async () => {
    const p = paths();
    await expect(
      startSupervisor({ db: p.db, fetchersDir: p.fetchersDir, socket: p.socket, dbMode: 0o1777 }),
    ).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
      message: expect.stringContaining("dbMode"),
    });
    expect(existsSync(p.db)).toBe(false);
  });

  it("x-supervisor serve creates them 0600, or with --db-mode", async () => {
    const umask022 = ["sh", "-c", 'umask 022 && exec "$@"', "sh"];
    for (const [flags, expected] of [
      [[], 0o600],
      [["--db-mode", "640"], 0o640],
    ] as const) {
      const p = paths();
      const proc = runCli(["serve", p.db, p.fetchersDir, p.socket, ...flags], {}, undefined, umask022);
      await waitFor(() => files(p.db).every((file) => existsSync(file)), 20_000, "the database's files");
      for (const file of files(p.db)) expect([file, mode(file)]).toEqual([file, expected]);
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
  });
});
