import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testTempDir } from "@x/test-support/temp-dir";
import { describe, expect, it } from "vitest";
import { jobArguments, runCommandJob } from "./command-job.js";

/** A temporary directory, removed when the current test finishes. */
const dir = () => testTempDir("x-supervisor-");

const job = { attrPath: "pkg", payload: " 1.0  1.1 " };

/** A command that acts on its options: see the file. */
const optionParser = fileURLToPath(new URL("../test/fixtures/option-parser.mjs", import.meta.url));

describe("runCommandJob", () => {
  it("appends the attr path and the non-empty payload fields, sets the environment, returns the exit status", async () => {
    const d = dir();
    const out = join(d, "out");
    const code = await runCommandJob(job, {
      command: "sh",
      args: [
        "-c",
        `printf '%s|' "$@" "$X_SUPERVISOR_ATTR_PATH" "$X_SUPERVISOR_PAYLOAD" > ${out}; exit 7`,
        "sh",
      ],
    });
    expect(code).toBe(7);
    expect(readFileSync(out, "utf8")).toBe("pkg|1.0|1.1|pkg| 1.0  1.1 |");
  });

  it("puts -- before the values when one starts with -, so an option parser reads them as operands", async () => {
    const d = dir();
    const [target, log] = [join(d, "x"), join(d, "seen")];
    const seen = async (attrPath: string, payload: string) => {
      const args = [optionParser, log, "update"];
      expect(await runCommandJob({ attrPath, payload }, { command: process.execPath, args })).toBe(0);
      return JSON.parse(readFileSync(log, "utf8").trim().split("\n").at(-1) as string);
    };
    expect(await seen(`--output=${target}`, "1.0 --force")).toEqual({
      argv: ["update", "--", `--output=${target}`, "1.0", "--force"],
      values: {},
      positionals: ["update", `--output=${target}`, "1.0", "--force"],
    });
    expect(await seen("pkg", `1.0 --output=${target}`)).toMatchObject({
      values: {},
      positionals: ["update", "pkg", "1.0", `--output=${target}`],
    });
    expect(existsSync(target)).toBe(false);
    // Values that look like no option run as before, without --.
    expect(await seen("pkg", "1.0 1.1")).toEqual({
      argv: ["update", "pkg", "1.0", "1.1"],
      values: {},
      positionals: ["update", "pkg", "1.0", "1.1"],
    });
  });

  it("adds -- only when a value starts with -, after the command's own arguments", () => {
    expect(jobArguments({ attrPath: "pkg", payload: " 1.0  1.1 " })).toEqual(["pkg", "1.0", "1.1"]);
    expect(jobArguments({ attrPath: "-pkg", payload: "1" })).toEqual(["--", "-pkg", "1"]);
    expect(jobArguments({ attrPath: "pkg", payload: "1 -" })).toEqual(["--", "pkg", "1", "-"]);
    expect(jobArguments({ attrPath: "pkg", payload: "a-b --" })).toEqual(["--", "pkg", "a-b", "--"]);
  });

  it("reports 127 for a missing command, 126 for one that cannot be executed, 128+n for a signal", async () => {
    const d = dir();
    expect(await runCommandJob(job, { command: join(d, "missing"), args: [] })).toBe(127);
    const notExecutable = join(d, "plain");
    writeFileSync(notExecutable, "echo hi\n");
    chmodSync(notExecutable, 0o644);
    expect(await runCommandJob(job, { command: notExecutable, args: [] })).toBe(126);
    expect(await runCommandJob(job, { command: "sh", args: ["-c", "kill -TERM $$", "sh"] })).toBe(143);
  });

  it("reports 124 when the time limit stops the command, 125 when the memory limit does", async () => {
    const started = Date.now();
    expect(await runCommandJob(job, { command: "sh", args: ["-c", "sleep 30", "sh"], timeoutMs: 300 })).toBe(
      124,
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    const hog = "const a = []; setInterval(() => a.push(Buffer.alloc(8e6, 1)), 5);";
    expect(
      await runCommandJob(job, {
        command: process.execPath,
        args: ["-e", hog],
        maxMemoryBytes: 80 * 1024 ** 2,
      }),
    ).toBe(125);
  });

  it("on abort sends SIGTERM to the command's group", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = runCommandJob(job, { command: "sh", args: ["-c", "sleep 30", "sh"] }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    expect(await running).toBe(143);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
