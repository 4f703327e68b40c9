import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createStatusLine } from "./status-line.js";

function terminal(isTTY: boolean) {
  let output = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      output += String(chunk);
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { isTTY, columns: 40 });
  return { stream, output: () => output };
}

describe("createStatusLine", () => {
  it("redraws one line on a terminal, throttled, and ends it with a newline", () => {
    const { stream, output } = terminal(true);
    const line = createStatusLine({ stream, intervalMs: 60_000 });
    expect(line.enabled).toBe(true);
    line.update("1 of 3");
    line.update("2 of 3");
    line.done("3 of 3 done");
    line.done("again");
    expect(output()).toBe("\r\x1b[2K1 of 3\r\x1b[2K3 of 3 done\n");
  });

  it("cuts a line wider than the terminal", () => {
    const { stream, output } = terminal(true);
    createStatusLine({ stream }).done("y".repeat(100));
    expect(output()).toContain(`${"y".repeat(38)}…`);
  });

  it("prints nothing when the stream is not a terminal", () => {
    const { stream, output } = terminal(false);
    const line = createStatusLine({ stream });
    expect(line.enabled).toBe(false);
    line.update("x");
    line.done();
    expect(output()).toBe("");
  });
});
