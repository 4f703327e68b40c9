import { describe, expect, it } from "vitest";
import { runModule } from "../test/run-module.js";

const commandLine = JSON.stringify(new URL("./command-line.ts", import.meta.url).pathname);
const stdio = JSON.stringify(new URL("./stdio.ts", import.meta.url).pathname);

describe("writeStdout", () => {
  it("writes a command's first words without creating process.stdout, and later writes follow them", async () => {
    const script = `
      const { exitQuietlyOnBrokenPipe } = await import(${commandLine});
      const { writeStdout } = await import(${stdio});
      exitQuietlyOnBrokenPipe();
      writeStdout("first\\n");
      // Node's own getter is still wrapped: nothing has created the stream
      process.stderr.write(Object.getOwnPropertyDescriptor(process, "stdout").get.name + "\\n");
      process.stdout.write("second\\n");
      writeStdout("third\\n");`;
    const { code, stdout, stderr } = await runModule(script);
    expect(code).toBe(0);
    expect(stderr).toBe("get\n");
    expect(stdout).toBe("first\nsecond\nthird\n");
  });

  it("hands a broken pipe to the stdio error handlers: exit 141, no stack trace", async () => {
    const script = `
      const { exitQuietlyOnBrokenPipe } = await import(${commandLine});
      const { writeStdout } = await import(${stdio});
      exitQuietlyOnBrokenPipe();
      writeStdout("x".repeat(4 * 1024 * 1024));
      setTimeout(() => process.exit(0), 10_000);`;
    const { code, stdout, stderr } = await runModule(script, { closeStdoutAfterBytes: 1 });
    expect(stderr).toBe("");
    expect(stdout.length).toBeGreaterThan(0);
    expect(code).toBe(141);
  });
});

describe("onStdioError", () => {
  it("stops calling a handler once it is removed, and throws an error nobody handles", async () => {
    const script = `
      const { onStdioError } = await import(${stdio});
      const remove = onStdioError(() => process.stderr.write("handled\\n"));
      process.stdout.emit("error", Object.assign(new Error("first"), { code: "EPIPE" }));
      remove();
      try { process.stdout.emit("error", new Error("second")); } catch (error) { process.stderr.write("thrown " + error.message + "\\n"); }`;
    const { code, stderr } = await runModule(script);
    expect(code).toBe(0);
    expect(stderr).toBe("handled\nthrown second\n");
  });
});
