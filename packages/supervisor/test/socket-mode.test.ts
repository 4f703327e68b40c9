import { lstatSync, readdirSync, watch } from "node:fs";
import { basename } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { startSupervisor } from "../src/index.js";
import { exchange, paths } from "./harness.js";

/**
 * Watches the socket's directory while `run` starts a daemon: every event on the socket's name, with the mode
 * and group the path had when the event was handled.
 */
async function watchSocketPath(socket: string, run: () => Promise<unknown>) {
  const seen: Array<{ event: string; mode?: number; gid?: number }> = [];
  const name = basename(socket);
  const watcher = watch(socket.slice(0, -name.length - 1), (event, file) => {
    if (file !== name) return;
    try {
      const stat = lstatSync(socket, { bigint: true });
      seen.push({ event, mode: Number(stat.mode) & 0o7777, gid: Number(stat.gid) });
    } catch {
      seen.push({ event });
    }
  });
  onTestFinished(() => watcher.close());
  await run();
  // the directory's events are delivered through the event loop: wait for the one of the socket's arrival
  await waitFor(() => seen.length > 0, 10_000, "the socket's directory event");
  await new Promise((resolve) => setTimeout(resolve, 100)); // and let any later one (a chmod) arrive too
  return seen;
}

describe("the socket's mode and group (no window)", () => {
  it("appears at its path with its final mode and group: one move, never a chmod or chown there", async () => {
    const p = paths();
    const seen = await watchSocketPath(p.socket, async () => {
      const sup = await startSupervisor({
        db: p.db,
        fetchersDir: p.fetchersDir,
        socket: p.socket,
        socketMode: 0o640,
        socketGroup: "daemon",
      });
      onTestFinished(() => sup.close());
    });
    // a chmod or chown at the final path would be a "change" event (IN_ATTRIB)
    expect(seen.map((s) => s.event)).toEqual(["rename"]);
    for (const s of seen.filter((s) => s.mode !== undefined))
      expect(s).toMatchObject({ mode: 0o640, gid: 1 });
    const stat = lstatSync(p.socket);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o640);
    expect(stat.gid).toBe(1);
    // the private directory is gone, and the socket works where it was moved to
    expect(readdirSync(p.root).filter((n) => n.startsWith(".xs-"))).toEqual([]);
    expect(await exchange(p.socket, "READY\n")).toBe("NOJOBS\n");
  });

  it("defaults to 0660 and the daemon's group; takes a numeric group id", async () => {
    const p = paths();
    const seen = await watchSocketPath(p.socket, async () => {
      const sup = await startSupervisor({ db: p.db, fetchersDir: p.fetchersDir, socket: p.socket });
      onTestFinished(() => sup.close());
    });
    expect(seen.map((s) => s.event)).toEqual(["rename"]);
    expect(lstatSync(p.socket).mode & 0o777).toBe(0o660);
    expect(lstatSync(p.socket).gid).toBe(process.getgid!());
    const q = paths();
    const sup = await startSupervisor({
      db: q.db,
      fetchersDir: q.fetchersDir,
      socket: q.socket,
      socketMode: 0o600,
      socketGroup: 1,
    });
    onTestFinished(() => sup.close());
    expect(lstatSync(q.socket).mode & 0o777).toBe(0o600);
    expect(lstatSync(q.socket).gid).toBe(1);
  });

  it("rejects an unknown group name and a bad group before it creates anything", async () => {
    const p = paths();
    for (const socketGroup of ["no-such-group-x", "", "a:b", -1, 1.5]) {
      await expect(
        startSupervisor({ db: p.db, fetchersDir: p.fetchersDir, socket: p.socket, socketGroup }),
      ).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_INVALID_OPTION" });
    }
    expect(readdirSync(p.root).sort()).toEqual(["fetchers"]);
  });
});
