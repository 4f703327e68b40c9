import { recordingLogger } from "@x/test-support/recording-logger";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConnectionRefusals, refusalsLoggedPerWindow, refusalWindowMs } from "./connection-refusals.js";
import { newStats, type RejectEvent } from "./events.js";

/** A ConnectionRefusals with a recording logger, fresh counters and the events it emits. */
function setup() {
  const recorder = recordingLogger();
  const stats = newStats();
  const events: RejectEvent[] = [];
  const refusals = new ConnectionRefusals({
    logger: recorder.logger,
    stats,
    emit: (_event, ...payload) => events.push(payload[0] as RejectEvent),
  });
  return { refusals, recorder, stats, events };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ConnectionRefusals", () => {
  it("counts and reports every refusal, logs the first ones of a window one by one and the rest in one line at its end", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { refusals, recorder, stats, events } = setup();
    for (let i = 0; i < 25; i++) {
      const reason = i % 5 === 0 ? "tls-handshake" : "too-many-tls-handshakes";
      refusals.refuse(
        { reason, sample: `sample ${i}`, peer: `127.0.0.1:${1000 + i}` },
        "TLS connection refused",
      );
    }
    expect(stats.connectionsRejected).toBe(25);
    expect(events).toHaveLength(25);
    expect(events[3]).toEqual({
      kind: "connection",
      reason: "too-many-tls-handshakes",
      sample: "sample 3",
      peer: "127.0.0.1:1003",
    });
    expect(recorder.messages("warn")).toEqual(Array(refusalsLoggedPerWindow).fill("TLS connection refused"));
    expect(recorder.records[0]!.fields).toEqual({
      reason: "tls-handshake",
      sample: "sample 0",
      peer: "127.0.0.1:1000",
    });
    vi.advanceTimersByTime(refusalWindowMs - 1);
    expect(recorder.records).toHaveLength(refusalsLoggedPerWindow);
    vi.advanceTimersByTime(1);
    expect(recorder.records).toHaveLength(refusalsLoggedPerWindow + 1);
    expect(recorder.records.at(-1)).toEqual({
      level: "warn",
      msg: "refused 15 more connections in the last 10 s: too-many-tls-handshakes 12, tls-handshake 3",
      fields: { refused: 15, reasons: { "too-many-tls-handshakes": 12, "tls-handshake": 3 } },
    });
    // A new window logs one by one again; nothing left to sum up, nothing logged by flush().
    refusals.refuse(
      { reason: "too-many-connections", sample: "x" },
      "connection refused: too many connections",
    );
    refusals.flush();
    expect(recorder.messages("warn").slice(refusalsLoggedPerWindow + 1)).toEqual([
      "connection refused: too many connections",
    ]);
  });

  it("sums up the refusals not logged yet when flushed early (the daemon stopping)", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { refusals, recorder } = setup();
    for (let i = 0; i < refusalsLoggedPerWindow + 2; i++) {
      refusals.refuse(
        { reason: "too-many-connections", sample: "x" },
        "connection refused: too many connections",
      );
    }
    vi.advanceTimersByTime(2_500);
    refusals.flush();
    expect(recorder.messages("warn").at(-1)).toBe(
      "refused 2 more connections in the last 3 s: too-many-connections 2",
    );
    vi.advanceTimersByTime(refusalWindowMs);
    expect(recorder.records).toHaveLength(refusalsLoggedPerWindow + 1);
  });
});
