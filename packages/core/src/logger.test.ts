import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createConsoleLogger, silentLogger } from "./logger.js";

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

describe("silentLogger", () => {
  it("accepts both pino call shapes and prints nothing", () => {
    expect(() => {
      silentLogger.info("message");
      silentLogger.error({ err: new Error("x") }, "message");
    }).not.toThrow();
    expect(Object.isFrozen(silentLogger)).toBe(true);
  });
});

describe("createConsoleLogger", () => {
  it("prints plain lines with level, name, message and fields", () => {
    const { lines, stream } = capture();
    const logger = createConsoleLogger({ stream, name: "demo" });
    logger.info({ queue: "q1", count: 3 }, "batch written");
    logger.warn("careful");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ INFO +\[demo\] batch written queue=q1 count=3$/);
    expect(lines[1]).toMatch(/WARN +\[demo\] careful$/);
  });

  it("drops lines below the level, and everything when silent", () => {
    const { lines, stream } = capture();
    const logger = createConsoleLogger({ stream, level: "warn" });
    logger.debug("d");
    logger.info("i");
    logger.error("e");
    createConsoleLogger({ stream, level: "silent" }).error("never");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("ERROR e");
  });

  it("prints pino-shaped JSON lines, bigint and errors included", () => {
    const { lines, stream } = capture();
    const logger = createConsoleLogger({ stream, json: true, level: "debug" });
    logger.debug({ big: 10n, err: Object.assign(new Error("boom"), { code: "E" }) }, "hello");
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 20, msg: "hello", big: "10", err: { message: "boom", code: "E" } });
    expect(typeof entry.time).toBe("number");
  });
});
