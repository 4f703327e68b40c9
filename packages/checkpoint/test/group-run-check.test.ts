import { describe, expect, it } from "vitest";
import {
  checkGroupRun,
  compareIds,
  type GroupEvent,
  type GroupRun,
  type Handling,
} from "./group-run-check.js";

/** Records 0 to 19, one per ms. */
const ids = Array.from({ length: 20 }, (_, i) => `${1_000 + i}-0`);
const handle = (member: string, i: number, at: number, paused = false): Handling => ({
  member,
  id: ids[i]!,
  at,
  paused,
});

/**
 * A good run of two members, batches of 2: records 0–11 handled at times 0–11; member a detects the downtime
 * on record 11 and pauses the group at 12; b hands out one more (12, at 13); a seeks back to record 10 at 20
 * and resumes at 21; records 10–19 are handled at 30–39.
 */
function goodRun(): GroupRun {
  const handlings = [
    ...Array.from({ length: 12 }, (_, i) => handle(i % 2 ? "b" : "a", i, i)),
    handle("b", 12, 13, true),
    ...Array.from({ length: 10 }, (_, k) => handle("a", 10 + k, 30 + k)),
  ];
  const events: GroupEvent[] = [
    { kind: "down", member: "a", at: 12, id: ids[11]! },
    { kind: "seek", member: "a", at: 20, id: ids[10]! },
    { kind: "resumed", member: "a", at: 21 },
  ];
  return { ids, handlings, events, members: 2, batchSize: 2 };
}

describe("checkGroupRun", () => {
  it("passes a run that lost nothing, replayed from the seek and stopped within a batch per member", () => {
    const check = checkGroupRun(goodRun());
    expect(check.failures).toEqual([]);
    expect(check.ok).toBe(true);
    expect(check.figures).toMatchObject({
      records: 20,
      handlings: 23,
      missing: 0,
      duplicates: 3, // 10, 11 and 12 again
      replayPoint: ids[10],
      replayAt: 20,
      replayedSpan: 3,
      duplicateBound: 2 * 2 + 3,
      skippedAfterReplay: 0,
      detectedAt: ids[11],
      staleNotReplayed: 0,
      handledSeenPaused: 1,
      pausedBound: 4,
      pauses: [{ from: 12, to: 21, by: "a", handled: 1, latencyMs: 1 }],
    });
  });

  it("fails on a record never handled, and on a handling of a record the stream never held", () => {
    const run = goodRun();
    const handlings = run.handlings.filter((handling) => handling.id !== ids[3]);
    handlings.push({ member: "a", id: "5-0", at: 40, paused: false });
    const check = checkGroupRun({ ...run, handlings });
    expect(check.ok).toBe(false);
    expect(check.failures).toEqual([
      "1 handlings of records the stream never held: 5-0",
      `1 records never handled: ${ids[3]}`,
    ]);
    expect(check.figures.missing).toBe(1);
  });

  it("fails on a record after the replay point handled only before the replay, and counts it stale", () => {
    const run = goodRun();
    const handlings = run.handlings.filter((handling) => !(handling.id === ids[15] && handling.at >= 20));
    handlings.push(handle("b", 15, 11));
    const check = checkGroupRun({ ...run, handlings });
    expect(check.failures).toEqual([
      `1 records at or after the replay point ${ids[10]} not handled after the replay: ${ids[15]}`,
    ]);
    expect(check.figures.skippedAfterReplay).toBe(1);
    // a seek to a later point leaves the records from the detection up to it stale
    const later = goodRun();
    const events = later.events.map((event) => (event.kind === "seek" ? { ...event, id: ids[13]! } : event));
    expect(checkGroupRun({ ...later, events }).figures).toMatchObject({
      replayPoint: ids[13],
      staleNotReplayed: 0, // 11 and 12 were handled again anyway, by the loop from 10
    });
    const skipping = {
      ...later,
      events,
      handlings: later.handlings.filter((h) => !(h.at >= 30 && h.at < 33)),
    };
    expect(checkGroupRun(skipping).figures.staleNotReplayed).toBe(2); // 11 and 12, handled stale, never again
  });

  it("fails when more than a batch per member is handled while the group is paused, and measures the latency", () => {
    const run = goodRun();
    const handlings = [
      ...run.handlings,
      ...[13, 14, 15, 16].map((i, k) => handle("b", i, 14 + k, true)), // 5 in the pause, bound 4
    ];
    const check = checkGroupRun({ ...run, handlings });
    expect(check.failures).toContain(
      "5 records handled while the group was paused (from 12, by a), more than 4",
    );
    expect(check.figures.pauses).toEqual([{ from: 12, to: 21, by: "a", handled: 5, latencyMs: 5 }]);
  });

  it("fails on a pause that never ends, and counts every episode", () => {
    const run = goodRun();
    const events: GroupEvent[] = [
      ...run.events,
      { kind: "down", member: "b", at: 35, id: ids[15]! },
      { kind: "down", member: "a", at: 36, id: ids[16]! }, // the group is paused already
    ];
    const check = checkGroupRun({ ...run, events });
    expect(check.failures).toEqual(["the group paused by b at 35 never resumed"]);
    expect(check.figures.pauses).toHaveLength(2);
    expect(check.figures.pauses[1]).toEqual({
      from: 35,
      to: undefined,
      by: "b",
      handled: 4, // at 36 to 39
      latencyMs: 4,
    });
  });

  it("fails on more duplicates than a batch per member plus the replayed span", () => {
    const run = goodRun();
    const again = Array.from({ length: 5 }, (_, i) => handle("b", i, 50 + i));
    const check = checkGroupRun({ ...run, handlings: [...run.handlings, ...again] });
    expect(check.failures).toEqual(["8 duplicate handlings, more than 7"]);
  });

  it("fails on a run without a downtime or without a recovery", () => {
    const run = goodRun();
    expect(checkGroupRun({ ...run, events: [] }).failures).toEqual([
      "no member paused the group: no downtime was detected",
      "no member sought the group back: no downtime was recovered",
    ]);
  });

  it("orders ids as Redis does", () => {
    expect(["10-1", "9-2", "10-0", "9-10"].sort(compareIds)).toEqual(["9-2", "9-10", "10-0", "10-1"]);
  });
});
