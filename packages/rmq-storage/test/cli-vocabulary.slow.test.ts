import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { cliCommand, cliEnv, runCli } from "./stack.js";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

// No broker needed: nothing here gets as far as connecting to one.
describe("x-rmq-storage's command-line vocabulary, shared with x-guard and x-supervisor", () => {
  it("--version on the program and on every command", async () => {
    const runs = await Promise.all(
      [[], ["serve"], ["stats"], ["teardown"]].map((c) => runCli([...c, "--version"])),
    );
    for (const run of runs)
      expect(run).toEqual({ code: 0, stdout: `x-rmq-storage ${version}\n`, stderr: "" });
  });

  it("a usage error is one line, a pointer to the help, and exit 64", async () => {
    const cases: Array<[string[], string]> = [
      [["serve", "--amqp", "amqp://h", "--storage", "sqlite:x", "--colour"], "x-rmq-storage serve"],
      [
        ["serve", "--amqp", "amqp://h", "--storage", "sqlite:x", "--log-level", "INFO"],
        "x-rmq-storage serve",
      ],
      [["stats"], "x-rmq-storage stats"],
      [["teardown", "--force=yes"], "x-rmq-storage teardown"],
      [["launch"], "x-rmq-storage"],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(args)));
    runs.forEach((run, i) => {
      const who = cases[i]![1];
      expect(run.code).toBe(64);
      const lines = run.stderr.split("\n");
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(new RegExp(`^${who}: \\S`));
      expect(lines[1]).toBe(`Try '${who} --help' for more information.`);
      expect(run.stdout).toBe("");
    });
  });

  it("serve takes --log-json, and --json-logs as a deprecated spelling that warns once", async () => {
    for (const flag of ["--log-json", "--json-logs"]) {
      // a broker that is not there: the server logs "starting", then retries until it is killed
      const args = ["serve", "--amqp", "amqp://127.0.0.1:1", "--storage", "sqlite::memory:", flag];
      const child = spawn(process.execPath, cliCommand(...args, "--log-level", "info"), { env: cliEnv() });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise((resolve) => child.once("close", resolve));
      onTestFinished(async () => {
        child.kill("SIGKILL");
        await exited;
      });
      await waitFor(() => stderr.includes('"starting"'), 20_000, `serve ${flag} to log that it starts`);
      const lines = stderr
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      const warnings = lines.filter((line) => String(line.msg).includes("deprecated"));
      if (flag === "--json-logs") {
        expect(lines[0]).toMatchObject({
          level: 40,
          name: "x-rmq-storage",
          msg: "--json-logs is deprecated and will be removed: use --log-json",
        });
        expect(warnings).toHaveLength(1);
      } else expect(warnings).toEqual([]);
      child.kill("SIGKILL");
      await exited;
    }
  });
});
