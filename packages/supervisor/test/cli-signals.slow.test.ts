import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { type CliProcess, runCli, serve } from "./cli-process.js";
import { paths } from "./harness.js";

/**
 * timeout(1) with a deadline far away. SIGALRM makes it act as at its deadline: it sends SIGTERM to the
 * command and then to its whole process group (the command's pid twice), which is what the daemons must take
 * as one stop request. `--preserve-status` makes it exit with the command's status: 0 after a graceful stop,
 * 143 after a forced one.
 */
const underTimeout = ["timeout", "--preserve-status", "600"];

/** Runs `x-supervisor <args…>` under timeout(1); its process group is killed when the test finishes. */
function runUnderTimeout(args: string[]): CliProcess {
  const proc = runCli(args, {}, undefined, underTimeout);
  onTestFinished(async () => {
    if (proc.child.exitCode === null) process.kill(-proc.child.pid!, "SIGKILL");
    await proc.exited;
  });
  return proc;
}

describe("a stop request sent as two signals, the pid's then the group's (timeout(1))", () => {
  it("x-supervisor serve stops gracefully, leaving no socket, -wal or -shm, every time", async () => {
    const rounds = 3;
    await Promise.all(
      Array.from({ length: rounds }, async () => {
        const p = paths();
        const proc = runUnderTimeout(["serve", p.db, p.fetchersDir, p.socket]);
        await waitFor(() => proc.stderr().includes("listening"), 30_000, "the daemon to listen");
        proc.child.kill("SIGALRM");
        expect(await proc.exited).toBe(0);
        expect(proc.stderr()).toContain("stopped");
        for (const file of [p.socket, `${p.db}-wal`, `${p.db}-shm`]) expect(existsSync(file)).toBe(false);
      }),
    );
  });

  it("x-supervisor worker stops its job and exits 0", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "slow 0 1\n");
    const job = join(p.root, "job.sh");
    writeFileSync(job, `#!/bin/sh\necho started > "${p.root}/started"\nexec sleep 30\n`);
    chmodSync(job, 0o755);
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 30_000, "the daemon to listen");
    const worker = runUnderTimeout(["worker", p.socket, "--", job]);
    await waitFor(() => existsSync(join(p.root, "started")), 30_000, "the job to start");
    worker.child.kill("SIGALRM");
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain("stopping gracefully");
  });
});
