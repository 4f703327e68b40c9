import { readFileSync } from "node:fs";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { type CliProcess, runCli } from "./cli-process.js";
import { paths } from "./harness.js";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

/** `runCli`, killed and waited for when the current test finishes. */
function started(args: string[]): CliProcess {
  const proc = runCli(args);
  onTestFinished(async () => {
    if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

describe("x-supervisor's command-line vocabulary, shared with x-guard and x-rmq-storage", () => {
  it("--version on the program and on every command", async () => {
    const runs = [[], ["serve"], ["worker"], ["status"], ["queue-html"]].map((command) =>
      runCli([...command, "--version"]),
    );
    expect(await Promise.all(runs.map((run) => run.exited))).toEqual([0, 0, 0, 0, 0]);
    for (const run of runs) expect(run.stdout()).toBe(`x-supervisor ${version}\n`);
  });

  it("a usage error is one line, a pointer to the help, and exit 64", async () => {
    const cases: Array<[string[], string]> = [
      [["serve", "a.db", "f", "s.sock", "--log-json=x"], "x-supervisor serve"],
      [["worker", "s.sock", "--log-level", "loud", "--", "true"], "x-supervisor worker"],
      [["status", "--nope"], "x-supervisor status"],
      [["queue-html", "a.db"], "x-supervisor queue-html"],
      [["frobnicate"], "x-supervisor"],
    ];
    const runs = cases.map(([args]) => runCli(args));
    expect(await Promise.all(runs.map((run) => run.exited))).toEqual(cases.map(() => 64));
    runs.forEach((run, i) => {
      const who = cases[i]![1];
      const lines = run.stderr().split("\n");
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(new RegExp(`^${who}: \\S`));
      expect(lines[1]).toBe(`Try '${who} --help' for more information.`);
      expect(run.stdout()).toBe("");
    });
    expect(runs[1]!.stderr()).toContain('--log-level expects debug, info, warn, error or silent, got "loud"');
  });

  it("worker takes --log-level and --log-json", async () => {
    const p = paths();
    // no daemon on the socket: the worker logs that it retries, as one JSON line each time
    const json = started(["worker", p.socket, "--log-json", "--log-level", "warn", "--", "true"]);
    await waitFor(() => json.stderr().includes("unreachable"), 20_000, "the worker's retry log");
    const line = JSON.parse(json.stderr().split("\n")[0]!);
    expect(line).toMatchObject({ level: 40, name: "x-supervisor worker", supervisor: p.socket });
    json.child.kill("SIGTERM");
    expect(await json.exited).toBe(0);
  });

  it("serve takes --json-logs as a deprecated spelling of --log-json, and warns once", async () => {
    const p = paths();
    const proc = started(["serve", p.db, p.fetchersDir, p.socket, "--json-logs"]);
    await waitFor(() => proc.stderr().includes("listening"), 20_000, "the daemon to listen");
    const lines = proc
      .stderr()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: "--json-logs is deprecated and will be removed: use --log-json",
    });
    expect(lines.filter((line) => String(line.msg).includes("deprecated"))).toHaveLength(1);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });
});
