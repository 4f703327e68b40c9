import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough, Readable, Writable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { describe, expect, it, onTestFinished } from "vitest";
import { ExecutionTimeout, GuardError, isInterrupt, timeGuard } from "../src/index.js";

/** A local HTTP server that accepts requests and never answers them. */
async function silentServer(): Promise<string> {
  const server = createServer(() => {});
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const never = () => new Readable({ read() {} });
const sink = () =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

/** Each way an interrupt surfaces: the work gets the task's signal and waits far beyond the limit. */
const sources: [string, () => Promise<(signal: AbortSignal) => Promise<unknown>>][] = [
  [
    "fetch",
    async () => {
      const url = await silentServer();
      return (signal) => fetch(url, { signal });
    },
  ],
  ["timers/promises", async () => (signal) => sleep(30_000, undefined, { signal })],
  ["events.once", async () => (signal) => once(new EventTarget(), "never", { signal })],
  [
    "stream/promises pipeline",
    async () => (signal) => pipeline(never(), new PassThrough(), sink(), { signal }),
  ],
  ["stream/promises finished", async () => (signal) => finished(never(), { signal })],
  [
    "child_process spawn",
    async () => (signal) => {
      const child = spawn("sleep", ["30"], { signal, stdio: "ignore" });
      onTestFinished(() => {
        child.kill("SIGKILL");
      });
      return once(child, "exit");
    },
  ],
  ["child_process execFile", async () => (signal) => promisify(execFile)("sleep", ["30"], { signal })],
];

describe("recognising an interrupt wherever it surfaces", () => {
  it.each(sources)(
    "%s: isInterrupt sees it, the rethrow idiom keeps it, run() rejects with the guard's error",
    async (_name, setUp) => {
      const work = await setUp();
      const guard = timeGuard({ timeoutMs: 100, checkIntervalMs: 10 });
      let caught: unknown;
      let reason: unknown;
      const result = guard.run(async ({ signal }) => {
        try {
          await work(signal);
          return "finished";
        } catch (error) {
          caught = error;
          reason = signal.reason;
          if (isInterrupt(error)) throw error; // the README's idiom
          return "swallowed";
        }
      });
      await expect(result).rejects.toBeInstanceOf(ExecutionTimeout);
      await expect(result).rejects.toBe(reason);
      expect(isInterrupt(caught)).toBe(true);
    },
  );

  it.each(sources.filter(([name]) => name !== "fetch"))(
    "%s rejects with an AbortError, not the guard's error: instanceof GuardError would swallow it",
    async (_name, setUp) => {
      const work = await setUp();
      const guard = timeGuard({ timeoutMs: 100, checkIntervalMs: 10 });
      const result = guard.run(async ({ signal }) => {
        try {
          await work(signal);
          return "finished";
        } catch (error) {
          if (error instanceof GuardError) throw error; // the old idiom
          expect(error).toMatchObject({ name: "AbortError", cause: signal.reason });
          return "swallowed";
        }
      });
      await expect(result).resolves.toBe("swallowed");
    },
  );

  it("run() maps an AbortError whose cause chain holds the guard's error, even nested", async () => {
    const guard = timeGuard({ timeoutMs: 50, checkIntervalMs: 10 });
    const result = guard.run(async ({ signal }) => {
      await once(signal, "abort");
      const inner = new DOMException("inner", { name: "AbortError", cause: signal.reason });
      const outer = new Error("outer", { cause: inner });
      outer.name = "AbortError";
      throw outer;
    });
    await expect(result).rejects.toBeInstanceOf(ExecutionTimeout);
  });
});
