import { describe, expect, it } from "vitest";
import { runModule } from "../test/run-module.js";
import { ExitCode, parseCommandLine, signalExitCode, UsageError } from "./command-line.js";
import { XError } from "./x-error.js";

describe("parseCommandLine", () => {
  const config = {
    options: { json: { type: "boolean" }, timeout: { type: "string" } },
    allowPositionals: true,
  } as const;

  it("parses flags and positionals", () => {
    const { values, positionals } = parseCommandLine({ ...config, args: ["--json", "--timeout", "5", "db"] });
    expect(values).toEqual({ json: true, timeout: "5" });
    expect(positionals).toEqual(["db"]);
  });

  it("turns an unknown flag into a UsageError", () => {
    let thrown: unknown;
    try {
      parseCommandLine({ ...config, args: ["--nope"] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect(XError.is(thrown, "ERR_X_USAGE")).toBe(true);
    expect((thrown as Error).message).toContain("--nope");
  });
});

describe("exit codes", () => {
  it("follow sysexits and the shell's 128 + n", () => {
    expect(ExitCode).toEqual({ OK: 0, FAILURE: 1, USAGE: 64, CONFIG: 78 });
    expect(signalExitCode("SIGINT")).toBe(130);
    expect(signalExitCode("SIGTERM")).toBe(143);
    expect(signalExitCode("SIGKILL")).toBe(137);
  });
});

describe("onShutdownSignals", () => {
  it("stops gracefully on the first signal and forces on the second", async () => {
    const moduleUrl = new URL("./command-line.ts", import.meta.url).pathname;
    const script = `
      const { onShutdownSignals } = await import(${JSON.stringify(moduleUrl)});
      const keepAlive = setInterval(() => {}, 1000);
      onShutdownSignals((signal) => { console.log("stop " + signal); });
      console.log("ready");
      process.kill(process.pid, "SIGTERM");
      setTimeout(() => process.kill(process.pid, "SIGINT"), 200);`;
    const { code, stdout } = await runModule(script);
    expect(code).toBe(130);
    expect(stdout.trim().split("\n")).toEqual(["ready", "stop SIGTERM"]);
  });

  it("removes its handlers when disposed", async () => {
    const { onShutdownSignals } = await import("./command-line.js");
    const before = process.listenerCount("SIGTERM");
    const dispose = onShutdownSignals(() => {});
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    dispose();
    expect(process.listenerCount("SIGTERM")).toBe(before);
  });
});
