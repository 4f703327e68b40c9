import { describe, expectTypeOf, it } from "vitest";
import type {
  ClientEvents,
  RmqStorageClient,
  RmqStorageError,
  RmqStorageServer,
  ServerEvents,
} from "./index.js";

declare const server: RmqStorageServer;
declare const client: RmqStorageClient;

describe("ServerEvents", () => {
  it("maps the four documented events to their payloads", () => {
    expectTypeOf<keyof ServerEvents>().toEqualTypeOf<
      "batch" | "storage-error" | "dead-letter" | "reconnect"
    >();
    expectTypeOf<ServerEvents["batch"]>().toEqualTypeOf<
      [{ queue: string; messages: number; items: number; durationMs: number }]
    >();
    expectTypeOf<ServerEvents["dead-letter"]>().toEqualTypeOf<[{ queue: string; reason: string }]>();
    expectTypeOf<ServerEvents["reconnect"]>().toEqualTypeOf<[{ attempt: number; delayMs: number }]>();
  });

  it("infers the listeners' parameters", () => {
    server.on("batch", (batch) => {
      expectTypeOf(batch.durationMs).toEqualTypeOf<number>();
      expectTypeOf(batch.queue).toEqualTypeOf<string>();
      // The pre-release `ms` field is gone.
      expectTypeOf(batch).not.toHaveProperty("ms");
    });
    server.on("storage-error", ({ error, attempt }) => {
      expectTypeOf(error).toEqualTypeOf<unknown>();
      expectTypeOf(attempt).toEqualTypeOf<number>();
    });
    server.once("reconnect", ({ delayMs }) => expectTypeOf(delayMs).toEqualTypeOf<number>());
    expectTypeOf(server.on("dead-letter", () => {})).toEqualTypeOf<RmqStorageServer>();
  });

  it("rejects unknown events and wrong listeners", () => {
    // @ts-expect-error: there is no `error` event
    server.on("error", (error: Error) => void error);
    // @ts-expect-error: the event is `storage-error`, not camel case
    server.on("storageError", () => {});
    // @ts-expect-error: the payload is an object, not a number of ms
    server.on("batch", (ms: number) => void ms);
    // @ts-expect-error: `timeout` is a client event
    server.on("timeout", () => {});
  });
});

describe("ClientEvents", () => {
  it("maps the three documented events to their payloads", () => {
    expectTypeOf<keyof ClientEvents>().toEqualTypeOf<"reconnect" | "timed-out" | "failed">();
    expectTypeOf<ClientEvents["failed"]>().toEqualTypeOf<[{ method: string; error: RmqStorageError }]>();
    expectTypeOf<ClientEvents["timed-out"]>().toEqualTypeOf<
      [{ method: string; acknowledged: number; expected: number }]
    >();
    expectTypeOf<ClientEvents["reconnect"]>().toEqualTypeOf<ServerEvents["reconnect"]>();
  });

  it("infers the listeners' parameters", () => {
    client.on("timed-out", ({ method, acknowledged, expected }) => {
      expectTypeOf(method).toEqualTypeOf<string>();
      expectTypeOf(acknowledged).toEqualTypeOf<number>();
      expectTypeOf(expected).toEqualTypeOf<number>();
    });
    client.on("reconnect", (event) =>
      expectTypeOf(event).toEqualTypeOf<{ attempt: number; delayMs: number }>(),
    );
  });

  it("rejects unknown events and wrong listeners", () => {
    // @ts-expect-error: `batch` is a server event
    client.on("batch", () => {});
    // @ts-expect-error: the payload's `delayMs` is a number
    client.on("reconnect", (event: { attempt: number; delayMs: string }) => void event);
  });
});
