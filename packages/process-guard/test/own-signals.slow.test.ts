import { describe, expect, it } from "vitest";
import { jsonLines, runTs } from "./helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: the fixture prints loosely shaped JSON
const parse = (stdout: string) => jsonLines(stdout) as any[];

const script = new URL("./fixtures/own-signals.ts", import.meta.url).pathname;

describe("own-process signals (allowProcessSignals)", () => {
  it("sends the ladder's signals to our own process from the watchdog, then emits each level", async () => {
    const { stdout, code } = await runTs(script, ["ladder"]);
    expect(code).toBe(0);
    const [{ received, events }] = parse(stdout);
    expect(received.map((r: { signal: string }) => r.signal)).toEqual(["SIGINT", "SIGTERM", "SIGTERM"]);
    received.forEach((r: { at: number }, level: number) => {
      expect(r.at).toBeGreaterThanOrEqual(150 + level * 150 - 5);
      expect(r.at).toBeLessThan(150 + level * 150 + 1_000);
    });
    expect(events.map((e: { level: number }) => e.level)).toEqual([0, 1, 2]);
    for (const event of events) expect(event.action).toContain("(from the watchdog)");
    expect(events[0].action).toContain("aborted the signal; sent SIGINT to our own process");
  });

  it("arrives while the main thread is stuck in synchronous code (the dead man's switch)", async () => {
    const started = performance.now();
    const { stdout, signal } = await runTs(script, ["stuck"]);
    expect(signal).toBe("SIGINT"); // no listener: the user opted into that
    expect(parse(stdout)).toEqual([{ stuck: expect.any(Number) }]);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it("follows progress() marks made while the main thread is busy", async () => {
    const { stdout, code } = await runTs(script, ["progress"]);
    expect(code).toBe(0);
    expect(parse(stdout)).toEqual([{ received: [] }]);
  });

  it("sends nothing after the activation ended", async () => {
    const { stdout } = await runTs(script, ["ended"]);
    expect(parse(stdout)).toEqual([{ received: [] }]);
  });

  it("works for a MemGuard: SIGINT, SIGTERM, SIGTERM with interruptType signal", async () => {
    const { stdout } = await runTs(script, ["memory"]);
    expect(parse(stdout)).toEqual([{ received: ["SIGINT", "SIGTERM", "SIGTERM"], levels: [0, 1, 2] }]);
  });
});
