import { describe, expect, it } from "vitest";
import { GuardError } from "../src/errors.js";
import { type ForwardedSignal, forwardedSignals, forwardSignals } from "../src/forward-signals.js";
import { runGuardedCommand } from "../src/guarded-command.js";

const listeners = () => forwardedSignals.map((signal) => process.listenerCount(signal));

describe("forwardSignals", () => {
  it("forwards HUP, INT, QUIT, TERM, USR1, USR2 and ALRM", () => {
    expect(forwardedSignals).toEqual([
      "SIGHUP",
      "SIGINT",
      "SIGQUIT",
      "SIGTERM",
      "SIGUSR1",
      "SIGUSR2",
      "SIGALRM",
    ]);
    expect(Object.isFrozen(forwardedSignals)).toBe(true);
  });

  it("listens while the command runs, and stops by itself once it has ended", async () => {
    const before = listeners();
    const command = runGuardedCommand("sh", ["-c", "sleep 0.2"], { stdio: "ignore", timeoutMs: 30_000 });
    forwardSignals(command);
    expect(listeners()).toEqual(before.map((count) => count + 1));
    await command;
    await Promise.resolve();
    expect(listeners()).toEqual(before);
  });

  it("stops when told to (idempotent, or by leaving a using block), and listens only to the signals given", async () => {
    const before = listeners();
    const command = runGuardedCommand("sh", ["-c", "sleep 0.2"], { stdio: "ignore", timeoutMs: 30_000 });
    {
      using _forwarding = forwardSignals(command, { signals: ["SIGHUP", "SIGUSR2"] });
      expect(listeners()).toEqual(
        forwardedSignals.map(
          (signal, i) => before[i]! + (signal === "SIGHUP" || signal === "SIGUSR2" ? 1 : 0),
        ),
      );
    }
    expect(listeners()).toEqual(before);
    const stop = forwardSignals(command, { signals: ["SIGINT"] });
    stop();
    stop();
    expect(listeners()).toEqual(before);
    await command;
  });

  it("as runGuardedCommand's forwardSignals option, listens from before the spawn until the command has ended", async () => {
    const before = listeners();
    const all = runGuardedCommand("sh", ["-c", "sleep 0.2"], { stdio: "ignore", forwardSignals: true });
    expect(listeners()).toEqual(before.map((count) => count + 1));
    await all;
    expect(listeners()).toEqual(before);
    const some = runGuardedCommand("sh", ["-c", "sleep 0.2"], {
      stdio: "ignore",
      forwardSignals: ["SIGHUP", "SIGTERM"],
    });
    expect(listeners()).toEqual(
      forwardedSignals.map((signal, i) => before[i]! + (signal === "SIGHUP" || signal === "SIGTERM" ? 1 : 0)),
    );
    await some;
    const none = runGuardedCommand("no-such-command-x", [], { stdio: "ignore", forwardSignals: false });
    expect(listeners()).toEqual(before);
    expect((await none).exitCode).toBe(127);
    for (const forward of [["SIGKILL"], "SIGHUP", 1]) {
      expect(() => runGuardedCommand("true", [], { forwardSignals: forward as never })).toThrow(
        /forwardSignals.*true, false or an array of SIGHUP, SIGINT/,
      );
    }
  });

  it("rejects a signal it does not forward, or something that is not a GuardedCommand", async () => {
    const command = runGuardedCommand("true", [], { stdio: "ignore" });
    for (const signals of [["SIGKILL"], ["SIGPIPE"], "SIGHUP"]) {
      expect(() => forwardSignals(command, { signals: signals as ForwardedSignal[] })).toThrow(GuardError);
    }
    expect(() => forwardSignals(command, { signals: ["SIGKILL" as ForwardedSignal] })).toThrow(
      /signals.*SIGHUP, SIGINT/,
    );
    expect(() => forwardSignals(Promise.resolve() as never)).toThrow(/a GuardedCommand/);
    await command;
  });
});
