import { describe, expect, it } from "vitest";
import { runModule } from "../test/run-module.js";
import {
  ExitCode,
  parseCommandLine,
  STOP_REQUEST_WINDOW_MS,
  signalExitCode,
  UsageError,
} from "./command-line.js";
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
    expect(ExitCode).toEqual({ OK: 0, FAILURE: 1, USAGE: 64, UNAVAILABLE: 69, CONFIG: 78 });
    expect(signalExitCode("SIGINT")).toBe(130);
    expect(signalExitCode("SIGTERM")).toBe(143);
    expect(signalExitCode("SIGKILL")).toBe(137);
  });
});

describe("onShutdownSignals", () => {
  const moduleUrl = new URL("./command-line.ts", import.meta.url).pathname;
  /** Sends `signals[0]`, then the rest `gapMs` later, back to back; prints "still running" 1.5 s after. */
  const signalScript = (signals: string[], gapMs: number) => `
      const { onShutdownSignals } = await import(${JSON.stringify(moduleUrl)});
      const keepAlive = setInterval(() => {}, 1000);
      onShutdownSignals((signal) => { console.log("stop " + signal); }, { windowMs: 300 });
      console.log("ready");
      const [first, ...rest] = ${JSON.stringify(signals)};
      process.kill(process.pid, first);
      setTimeout(() => { for (const signal of rest) process.kill(process.pid, signal); }, ${gapMs});
      setTimeout(() => { console.log("still running"); process.exit(0); }, ${gapMs} + 1500);`;

  it("takes signals within the window as one stop request (timeout(1): the pid, then the group)", async () => {
    const { code, stdout } = await runModule(signalScript(["SIGTERM", "SIGTERM", "SIGTERM"], 0));
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toEqual(["ready", "stop SIGTERM", "still running"]);
  });

  it("ignores another kind of signal soon after the first (Ctrl-C, then a parent's SIGTERM)", async () => {
    const { code, stdout } = await runModule(signalScript(["SIGINT", "SIGTERM"], 20));
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toEqual(["ready", "stop SIGINT", "still running"]);
  });

  it("forces on a signal, of either kind, once the window has passed", async () => {
    const [same, other] = await Promise.all([
      runModule(signalScript(["SIGTERM", "SIGTERM"], 600)),
      runModule(signalScript(["SIGTERM", "SIGINT"], 600)),
    ]);
    expect([same.code, other.code]).toEqual([143, 130]);
    for (const run of [same, other]) expect(run.stdout.trim().split("\n")).toEqual(["ready", "stop SIGTERM"]);
  });

  it("has a window of 1 s by default", () => {
    expect(STOP_REQUEST_WINDOW_MS).toBe(1000);
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

describe("ignoreBrokenPipe", () => {
  it("replaces exitQuietlyOnBrokenPipe: the process runs on, and later writes are dropped", async () => {
    const moduleUrl = new URL("./command-line.ts", import.meta.url).pathname;
    const script = `
      const { exitQuietlyOnBrokenPipe, ignoreBrokenPipe } = await import(${JSON.stringify(moduleUrl)});
      exitQuietlyOnBrokenPipe();
      ignoreBrokenPipe();
      const line = "x".repeat(1000) + "\\n";
      process.stdout.once("error", () =>
        setTimeout(() => {
          process.stdout.write("dropped\\n");
          process.stderr.write("still running\\n");
          setTimeout(() => process.exit(0), 100);
        }, 100),
      );
      const write = () => {
        while (process.stdout.write(line)) {}
        process.stdout.once("drain", write);
      };
      write();`;
    const { code, stdout, stderr } = await runModule(script, { closeStdoutAfterBytes: 1 });
    expect(stdout.length).toBeGreaterThan(0);
    expect(stderr).toBe("still running\n");
    expect(code).toBe(0);
  });
});
