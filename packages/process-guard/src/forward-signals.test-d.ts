import { describe, expectTypeOf, it } from "vitest";
import {
  type ForwardedSignal,
  forwardedSignals,
  forwardSignals,
  type GuardedCommand,
  runGuardedCommand,
  type SignalForwarding,
} from "./index.js";

describe("forwardSignals", () => {
  it("takes a GuardedCommand and signals from forwardedSignals only, and returns a disposable stop", () => {
    expectTypeOf(forwardedSignals).toEqualTypeOf<
      readonly ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM"]
    >();
    expectTypeOf<ForwardedSignal>().toExtend<NodeJS.Signals>();
    const command: GuardedCommand = runGuardedCommand("true", []);
    expectTypeOf(forwardSignals(command)).toEqualTypeOf<SignalForwarding>();
    expectTypeOf<SignalForwarding>().toExtend<() => void>();
    expectTypeOf<SignalForwarding>().toExtend<Disposable>();
    // @ts-expect-error SIGKILL cannot be received, so it is not forwarded
    forwardSignals(command, { signals: ["SIGKILL"] });
    // @ts-expect-error a plain promise has no kill()
    forwardSignals(Promise.resolve());
  });
});
