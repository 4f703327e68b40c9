import { describe, expectTypeOf, it } from "vitest";
import type { RejectEvent, RejectReason, Supervisor, SupervisorEvents, SupervisorStats } from "./index.js";

declare const sup: Supervisor;

describe("SupervisorEvents", () => {
  it("maps the five documented events", () => {
    expectTypeOf<keyof SupervisorEvents>().toEqualTypeOf<"job" | "done" | "ingest" | "run" | "reject">();
  });

  it("types each payload", () => {
    expectTypeOf<SupervisorEvents["job"]>().toEqualTypeOf<
      [{ attrPath: string; payload: string; startedAt: number; holder?: string }]
    >();
    expectTypeOf<SupervisorEvents["done"]>().toEqualTypeOf<
      [{ attrPath: string; exitCode: number; finishedAt: number; holder?: string }]
    >();
    expectTypeOf<SupervisorEvents["ingest"]>().toEqualTypeOf<
      [{ fetcher: string; runStarted: number; file: string; lines: number }]
    >();
    expectTypeOf<SupervisorEvents["run"]>().toEqualTypeOf<
      [{ fetcher: string; runStarted: number; change: "added" | "completed" | "deleted" }]
    >();
    expectTypeOf<SupervisorEvents["reject"]>().toEqualTypeOf<[RejectEvent]>();
  });

  it("types a rejection: its kind, one of the nineteen reasons, an optional file or peer", () => {
    expectTypeOf<RejectEvent>().toEqualTypeOf<{
      kind: "line" | "command" | "file" | "connection";
      reason: RejectReason;
      file?: string;
      sample: string;
      peer?: string;
    }>();
    expectTypeOf<RejectReason>().toEqualTypeOf<
      | "no-space"
      | "too-long"
      | "bad-utf8"
      | "bad-cr"
      | "bad-name"
      | "not-a-file"
      | "symlink"
      | "unreadable"
      | "unknown-command"
      | "bad-done"
      | "command-too-long"
      | "too-many-commands"
      | "tls-no-certificate"
      | "tls-untrusted-certificate"
      | "tls-expired-certificate"
      | "tls-plaintext"
      | "tls-handshake"
      | "too-many-tls-handshakes"
      | "too-many-connections"
    >();
  });
});

describe("sup.on()", () => {
  it("infers every listener's parameter from the event name", () => {
    sup.on("job", (job) => {
      expectTypeOf(job.attrPath).toEqualTypeOf<string>();
      expectTypeOf(job.startedAt).toEqualTypeOf<number>();
    });
    sup.on("done", ({ exitCode }) => expectTypeOf(exitCode).toEqualTypeOf<number>());
    sup.once("ingest", ({ lines }) => expectTypeOf(lines).toEqualTypeOf<number>());
    sup.on("run", ({ change }) => expectTypeOf(change).toEqualTypeOf<"added" | "completed" | "deleted">());
    sup.on("reject", (event) => {
      expectTypeOf(event).toEqualTypeOf<RejectEvent>();
      expectTypeOf(event.file).toEqualTypeOf<string | undefined>();
    });
    expectTypeOf(sup.on("job", () => {})).toEqualTypeOf<Supervisor>();
  });

  it("rejects an unknown event name", () => {
    // @ts-expect-error: the daemon never emits `error`
    sup.on("error", (error: Error) => void error);
    // @ts-expect-error: there is no `dispatch` event (it is `job`)
    sup.on("dispatch", () => {});
  });

  it("rejects a listener of the wrong signature", () => {
    // @ts-expect-error: the payload is an object, not the attr path
    sup.on("job", (attrPath: string) => void attrPath);
    // @ts-expect-error: `done` carries no payload field
    sup.on("done", (event: { attrPath: string; payload: string; startedAt: number }) => void event);
    // @ts-expect-error: one argument only
    sup.on("run", (event: SupervisorEvents["run"][0], extra: number) => void [event, extra]);
  });

  it("types emit() with the same map", () => {
    // @ts-expect-error: `change` is one of three words
    sup.emit("run", { fetcher: "f", runStarted: 1, change: "renamed" });
    expectTypeOf(sup.emit("done", { attrPath: "a", exitCode: 0, finishedAt: 1 })).toEqualTypeOf<boolean>();
  });
});

describe("stats()", () => {
  it("returns the documented counters, all numbers", () => {
    expectTypeOf(sup.stats()).toEqualTypeOf<SupervisorStats>();
    expectTypeOf<keyof SupervisorStats>().toEqualTypeOf<
      | "dispatched"
      | "finished"
      | "linesIngested"
      | "linesRejected"
      | "commandsRejected"
      | "filesIgnored"
      | "connections"
      | "connectionsRejected"
    >();
    expectTypeOf<SupervisorStats[keyof SupervisorStats]>().toEqualTypeOf<number>();
  });
});
