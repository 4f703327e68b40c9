import { describe, expect, it } from "vitest";
import { CommitRatePacing, WritePacing, writeTable } from "./write-pacing.js";

describe("WritePacing", () => {
  it("lets writes through at once until one is rolled back", async () => {
    const pacing = new WritePacing();
    const started = performance.now();
    for (let i = 0; i < 20; i++) {
      await pacing.ready("S:Job");
      pacing.settle("S:Job", false, 5);
    }
    expect(pacing.gapMs("S:Job")).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("grows the gap of that table only after a rollback, and shrinks it as writes commit, down to none", () => {
    const pacing = new WritePacing();
    pacing.settle("S:Job", true, 30);
    expect(pacing.gapMs("S:Job")).toBe(60);
    pacing.settle("S:Job", true, 30);
    expect(pacing.gapMs("S:Job")).toBe(240);
    expect(pacing.gapMs("S:Other")).toBe(0);
    pacing.settle("S:Job", false, 30);
    expect(pacing.gapMs("S:Job")).toBeCloseTo(204);
    for (let i = 0; i < 60; i++) pacing.settle("S:Job", false, 30);
    expect(pacing.gapMs("S:Job")).toBe(0);
  });

  it("never grows a gap beyond 3.2 s, however many rollbacks in a row", () => {
    const pacing = new WritePacing();
    for (let i = 0; i < 20; i++) pacing.settle("S:Job", true, 30);
    expect(pacing.gapMs("S:Job")).toBe(3_200);
  });

  it("waits a jittered gap after a rollback, and stops waiting when the signal aborts", async () => {
    const pacing = new WritePacing(() => 0.5);
    pacing.settle("S:Job", true, 100);
    const started = performance.now();
    await pacing.ready("S:Job");
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    const controller = new AbortController();
    const waiting = pacing.ready("S:Job", controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
  });
});

describe("CommitRatePacing", () => {
  it("brings clients paced apart closer together: under the target each adds the same step to its chance", async () => {
    const [a, b] = [new CommitRatePacing(() => 0), new CommitRatePacing(() => 0)];
    b.settle("S:Job", true, 20); // b was rolled back: its chance is quartered, a's is not
    for (const pacing of [a, b]) pacing.observeCommit(); // one commit seen by both: a load under the target
    const before = a.chance / b.chance;
    await a.ready("S:Job");
    await b.ready("S:Job");
    expect(before).toBe(4);
    // Scaling both by the same factor would keep the ratio at 4 (and with it their shares of the work).
    expect(a.chance / b.chance).toBeLessThan(3);
    expect(a.chance).toBeCloseTo(0.012, 5);
  });

  it("starts slowly, and raises its chance of writing while the notices show a quiet catalog", async () => {
    const pacing = new CommitRatePacing(() => 0);
    expect(pacing.chance).toBe(0.01);
    await pacing.ready("S:Job");
    expect(pacing.chance).toBe(0.01); // no change notice yet: nothing measured
    pacing.observeCommit();
    // One commit within 10 write durations (of 20 ms assumed): a load of 0.1, under the target of 0.12.
    await pacing.ready("S:Job");
    expect(pacing.chance).toBeCloseTo(0.012, 5);
  });

  it("without change notices, raises its chance by 5 % per commit", () => {
    const pacing = new CommitRatePacing(() => 0);
    pacing.settle("S:Job", false, 20);
    expect(pacing.chance).toBeCloseTo(0.0105, 5);
  });

  it("quarters its chance at a rollback, at most 0.01 and at least 0.002", () => {
    const pacing = new CommitRatePacing(() => 0);
    pacing.settle("S:Job", true, 20);
    expect(pacing.chance).toBe(0.0025);
    for (let i = 0; i < 5; i++) pacing.settle("S:Job", true, 20);
    expect(pacing.chance).toBe(0.002);
  });

  it("lowers its chance to the target over the commit rate the change notices show", async () => {
    const pacing = new CommitRatePacing(() => 0);
    await pacing.ready("S:Job");
    pacing.observeCommit();
    pacing.settle("S:Job", false, 20);
    // 5 commits within 10 write durations: a load of 0.5 write per duration, about four times the target.
    for (let i = 0; i < 4; i++) pacing.observeCommit();
    await pacing.ready("S:Job");
    expect(pacing.chance).toBeCloseTo(0.0024, 4);
  });

  it("stops waiting when the signal aborts", async () => {
    const pacing = new CommitRatePacing(() => 0.999);
    const controller = new AbortController();
    const waiting = pacing.ready("S:Job", controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
  });
});

describe("writeTable", () => {
  it("names the table of a write path", () => {
    expect(writeTable("/attributegroup/S:Job/RID,expected:=state;state")).toBe("S:Job");
    expect(writeTable("/attributegroup/S:Job/RID;state")).toBe("S:Job");
    expect(writeTable("/entity/S:Job")).toBe("S:Job");
    expect(writeTable("/entity/S:Job?defaults=RID")).toBe("S:Job");
    expect(writeTable("/entity/S:Job/id=1")).toBe("S:Job");
    expect(writeTable("/")).toBe("/");
  });
});
