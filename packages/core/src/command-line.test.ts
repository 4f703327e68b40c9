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
    expect((thrown as Error).message).toBe("Unknown option '--nope'");
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
  const moduleUrl = new URL("./command-line.ts", import.meta.url).pathname;
  const signalScript = (signals: string[], gapMs: number) => `
      const { onShutdownSignals } = await import(${JSON.stringify(moduleUrl)});
      const keepAlive = setInterval(() => {}, 1000);
      onShutdownSignals((signal) => { console.log("stop " + signal); }, { otherSignalGraceMs: 300 });
      console.log("ready");
      const signals = ${JSON.stringify(signals)};
      process.kill(process.pid, signals[0]);
      setTimeout(() => process.kill(process.pid, signals[1]), ${gapMs});
      setTimeout(() => { console.log("still running"); process.exit(0); }, ${gapMs} + 1500);`;

  it("stops gracefully on the first signal and forces on the same signal again", async () => {
    const { code, stdout } = await runModule(signalScript(["SIGTERM", "SIGTERM"], 50));
    expect(code).toBe(143);
    expect(stdout.trim().split("\n")).toEqual(["ready", "stop SIGTERM"]);
  });

  it("ignores another kind of signal soon after the first (Ctrl-C, then a parent's SIGTERM)", async () => {
    const { code, stdout } = await runModule(signalScript(["SIGINT", "SIGTERM"], 20));
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toEqual(["ready", "stop SIGINT", "still running"]);
  });

  it("forces on another kind of signal once the grace delay has passed", async () => {
    const { code, stdout } = await runModule(signalScript(["SIGTERM", "SIGINT"], 600));
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

describe("exitQuietlyOnBrokenPipe", () => {
  it("ends the process with 141 and no stack trace when the reader closes its output", async () => {
    const moduleUrl = new URL("./command-line.ts", import.meta.url).pathname;
    const script = `
      const { exitQuietlyOnBrokenPipe } = await import(${JSON.stringify(moduleUrl)});
      exitQuietlyOnBrokenPipe();
      const line = "x".repeat(1000) + "\\n";
      const write = () => { while (process.stdout.write(line)) {} process.stdout.once("drain", write); };
      write();`;
    const { code, stdout, stderr } = await runModule(script, { closeStdoutAfterBytes: 1 });
    expect(stderr).toBe("");
    expect(stdout.length).toBeGreaterThan(0);
    expect(code).toBe(141);
  });
});
