import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { readQueueStatus, SupervisorStorage } from "../src/index.js";
import { runCli, serve } from "./cli-process.js";
import { paths } from "./harness.js";

describe("log lines a person reads", () => {
  it("serve's listening line names only the listeners it has", async () => {
    const p = paths();
    const proc = serve(p);
    const line = await waitFor(
      () =>
        proc
          .stderr()
          .split("\n")
          .find((l) => l.includes("listening")),
      20_000,
      "the listening line",
    );
    expect(line).toContain(`socket=${p.socket}`);
    expect(line).not.toContain("undefined");
    expect(line).not.toMatch(/ (tls|http)=/);
  });

  it("a startup failure is one line with the error's message and code, not the error as JSON", async () => {
    const p = paths();
    const proc = runCli(["serve", p.db, p.fetchersDir, join(p.root, "missing", "s.sock")]);
    expect(await proc.exited).toBe(78);
    const lines = proc.stderr().trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /ERROR \[x-supervisor\] cannot start: the socket's directory \S+missing does not exist; .* code=ERR_X_SUPERVISOR_SOCKET_PATH kind=unusable$/,
    );
    expect(lines[0]).not.toContain("{");
  });

  it("a database that cannot be opened is named: status, serve and the API", async () => {
    const p = paths();
    const missing = join(p.root, "nowhere", "state.db");
    const status = runCli(["status", missing]);
    expect(await status.exited).toBe(78);
    expect(status.stderr()).toContain(
      `[x-supervisor status] cannot read the queue: cannot open the database ${missing}: `,
    );
    const daemon = runCli(["serve", missing, p.fetchersDir, p.socket]);
    expect(await daemon.exited).toBe(78);
    expect(daemon.stderr()).toContain(`cannot start: cannot open the database ${missing}: `);
    for (const open of [() => SupervisorStorage.open(missing), () => readQueueStatus(missing)]) {
      expect(open).toThrow(expect.objectContaining({ code: "ERR_X_SUPERVISOR_DATABASE" }));
      expect(open).toThrow(`cannot open the database ${missing}`);
    }
  });
});

describe("log lines a machine reads (--log-json)", () => {
  const records = (stderr: string) =>
    stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { level: number; msg: string; [field: string]: unknown });

  it("the worker writes only JSON lines: connected, the time limit, the job's report, then idle", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "slowjob 1\n");
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 20_000, "the daemon");
    const worker = runCli([
      "worker",
      p.socket,
      "--timeout",
      "0.2",
      "--log-json",
      "--",
      "sh",
      "-c",
      "sleep 30",
      "job",
    ]);
    onTestFinished(async () => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });
    await waitFor(() => worker.stderr().includes("no job yet"), 30_000, "the worker's idle line");
    const lines = records(worker.stderr());
    expect(lines.map((l) => l.level).every((level) => [30, 40, 50].includes(level))).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual([
      "connected to the supervisor",
      "job started",
      expect.stringMatching(/^time limit: SIGINT to process group \d+$/),
      "job slowjob was interrupted because it was taking too long",
      "job finished",
      "no job yet; asking again every idle delay",
    ]);
    expect(lines[2]).toMatchObject({ level: 40, limit: "time", escalation: 0 });
    expect(lines[3]).toMatchObject({ level: 40, attrPath: "slowjob", exitCode: 124 });
    expect(lines[5]).toMatchObject({ level: 30, idleDelayMs: 60_000 });
  });

  it("a failed start is one JSON line too: serve, status, queue-html", async () => {
    const p = paths();
    const missing = join(p.root, "missing", "state.db");
    for (const args of [
      ["serve", missing, p.fetchersDir, p.socket],
      ["status", missing],
      ["queue-html", missing, join(p.root, "q.html")],
    ]) {
      const proc = runCli([...args, "--log-json"]);
      expect(await proc.exited, args[0]).toBe(78);
      expect(records(proc.stderr()), args[0]).toEqual([
        expect.objectContaining({ level: 50, code: "ERR_X_SUPERVISOR_DATABASE", kind: "unusable" }),
      ]);
    }
  });
});
