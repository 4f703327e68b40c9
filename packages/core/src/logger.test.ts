import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type ConsoleLoggerOptions, createConsoleLogger, silentLogger } from "./logger.js";
import { XError } from "./x-error.js";

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

describe("createConsoleLogger own keys", () => {
  it("never lets a field overwrite the line's level, time, name or message", () => {
    const { lines, stream } = capture();
    const logger = createConsoleLogger({ stream, json: true, name: "x-test" });
    logger.warn({ level: 2, time: "t", name: "n", msg: "m", message: "mm", pid: 7 }, "escalated");
    expect(JSON.parse(lines[0]!)).toEqual({
      level: 40,
      time: expect.any(Number),
      name: "x-test",
      msg: "escalated",
      "field.level": 2,
      "field.time": "t",
      "field.name": "n",
      "field.msg": "m",
      "field.message": "mm",
      pid: 7,
    });
  });

  it("renames them in plain lines too", () => {
    const { lines, stream } = capture();
    createConsoleLogger({ stream }).warn({ level: 0 }, "time limit");
    expect(lines[0]).toMatch(/WARN {2}time limit field\.level=0$/);
  });
});

describe("createConsoleLogger fields", () => {
  it("prints a circular value instead of throwing", () => {
    const { lines, stream } = capture();
    const node: Record<string, unknown> = { id: 1 };
    node.self = node;
    node.list = [node, { up: node }];
    for (const json of [true, false]) createConsoleLogger({ stream, json }).info({ node }, "loop");
    expect(JSON.parse(lines[0]!).node).toEqual({
      id: 1,
      self: "[Circular]",
      list: ["[Circular]", { up: "[Circular]" }],
    });
    expect(lines[1]).toContain('node={"id":1,"self":"[Circular]"');
  });

  it("keeps an error's name, message, stack, own fields and causes, as pino's err serializer does", () => {
    const { lines, stream } = capture();
    const root = Object.assign(new RangeError("disk full"), { errno: 28 });
    const error = Object.assign(new XError("ERR_X_DEMO", "write failed", { cause: root }), { path: "/a" });
    const loop = new Error("loop");
    loop.cause = loop;
    createConsoleLogger({ stream, json: true }).error({ err: error, loop }, "failed");
    const { err, loop: loopOut } = JSON.parse(lines[0]!);
    expect(err).toMatchObject({ name: "XError", code: "ERR_X_DEMO", message: "write failed", path: "/a" });
    expect(err.stack).toContain("write failed");
    expect(err.stack).toContain("logger.test.ts");
    expect(err.cause).toMatchObject({ name: "RangeError", message: "disk full", errno: 28 });
    expect(err.cause.stack).toContain("RangeError: disk full");
    expect(loopOut).toMatchObject({ message: "loop", cause: "[Circular]" });
  });

  it("keeps the causes but not the stacks on plain lines", () => {
    const { lines, stream } = capture();
    const error = new Error("outer", { cause: new TypeError("inner") });
    createConsoleLogger({ stream }).warn({ err: error }, "oops");
    expect(lines[0]).toContain(
      'oops err={"name":"Error","message":"outer","cause":{"name":"TypeError","message":"inner"}}',
    );
  });

  it("logs an error given alone under err, with its message as the line's", () => {
    const { lines, stream } = capture();
    createConsoleLogger({ stream, json: true }).error(new Error("boom"));
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "boom", err: { name: "Error", message: "boom" } });
  });
});

describe("createConsoleLogger options", () => {
  it.each([
    [
      { level: "INFO" },
      /invalid option level: "INFO" \(expected one of "debug", "info", "warn", "error", "silent"\)/,
    ],
    [{ levle: "debug" }, /unknown option levle: "debug"; did you mean level\?/],
    [{ json: "yes" }, /invalid option json/],
    [{ stream: {} }, /invalid option stream/],
    [{ name: 3 }, /invalid option name/],
  ])("refuses %j with ERR_X_CORE_INVALID_OPTION", (options, message) => {
    let thrown: unknown;
    try {
      createConsoleLogger(options as ConsoleLoggerOptions);
    } catch (error) {
      thrown = error;
    }
    expect(XError.is(thrown, "ERR_X_CORE_INVALID_OPTION")).toBe(true);
    expect((thrown as Error).message).toMatch(message);
  });
});
