import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
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
    expect(await proc.exited).toBe(1);
    const lines = proc.stderr().trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /ERROR \[x-supervisor\] cannot start: the socket's directory \S+missing does not exist; .* code=ERR_X_SUPERVISOR_SOCKET_PATH$/,
    );
    expect(lines[0]).not.toContain("{");
  });

  it("a database that cannot be opened is named: status, serve and the API", async () => {
    const p = paths();
    const missing = join(p.root, "nowhere", "state.db");
    const status = runCli(["status", missing]);
    expect(await status.exited).toBe(1);
    expect(status.stderr()).toContain(`x-supervisor status: cannot open the database ${missing}: `);
    const daemon = runCli(["serve", missing, p.fetchersDir, p.socket]);
    expect(await daemon.exited).toBe(1);
    expect(daemon.stderr()).toContain(`cannot start: cannot open the database ${missing}: `);
    for (const open of [() => SupervisorStorage.open(missing), () => readQueueStatus(missing)]) {
      expect(open).toThrow(expect.objectContaining({ code: "ERR_X_SUPERVISOR_DATABASE" }));
      expect(open).toThrow(`cannot open the database ${missing}`);
    }
  });
});
