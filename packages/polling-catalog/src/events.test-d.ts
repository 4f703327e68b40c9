import { describe, expectTypeOf, it } from "vitest";
import type {
  AmqpEvent,
  ClaimedEvent,
  ErmrestCatalog,
  OutageEvent,
  PollingCatalogEvents,
  PollingErmrestCatalog,
  RecoveredEvent,
  WakeEvent,
  WakeReason,
} from "./index.js";

declare const catalog: PollingErmrestCatalog;
declare const plain: ErmrestCatalog;

describe("PollingCatalogEvents", () => {
  it("maps the five documented events", () => {
    expectTypeOf<keyof PollingCatalogEvents>().toEqualTypeOf<
      "wake" | "amqp" | "claimed" | "outage" | "recovered"
    >();
    expectTypeOf<PollingCatalogEvents["outage"]>().toEqualTypeOf<[OutageEvent]>();
    expectTypeOf<PollingCatalogEvents["recovered"]>().toEqualTypeOf<[RecoveredEvent]>();
    expectTypeOf<PollingCatalogEvents["wake"]>().toEqualTypeOf<[WakeEvent]>();
    expectTypeOf<PollingCatalogEvents["amqp"]>().toEqualTypeOf<[AmqpEvent]>();
    expectTypeOf<PollingCatalogEvents["claimed"]>().toEqualTypeOf<[ClaimedEvent]>();
  });

  it("types the payloads", () => {
    expectTypeOf<WakeEvent>().toEqualTypeOf<{ reason: WakeReason; notices: number }>();
    expectTypeOf<WakeReason>().toEqualTypeOf<"start" | "rebind" | "notice" | "poll-timeout" | "retry">();
    expectTypeOf<OutageEvent>().toEqualTypeOf<{ error: Error; retryInMs: number }>();
    expectTypeOf<RecoveredEvent>().toEqualTypeOf<{ durationMs: number; failures: number }>();
    expectTypeOf<AmqpEvent>().toEqualTypeOf<
      { state: "up"; url: string } | { state: "down"; error: Error; retryInMs: number }
    >();
    expectTypeOf<ClaimedEvent>().toEqualTypeOf<{
      queryPath: string;
      updatePath: string;
      batch: Array<[candidate: Record<string, unknown>, update: Record<string, unknown>]>;
    }>();
  });
});

describe("catalog.on()", () => {
  it("infers the listeners' parameters", () => {
    catalog.on("wake", ({ reason, notices }) => {
      expectTypeOf(reason).toEqualTypeOf<WakeReason>();
      expectTypeOf(notices).toEqualTypeOf<number>();
    });
    catalog.on("claimed", (event) => {
      expectTypeOf(event.batch).toEqualTypeOf<ClaimedEvent["batch"]>();
      expectTypeOf(event.batch[0]).toEqualTypeOf<
        [Record<string, unknown>, Record<string, unknown>] | undefined
      >();
    });
    expectTypeOf(catalog.on("wake", () => {})).toEqualTypeOf<PollingErmrestCatalog>();
  });

  it("narrows the amqp event on its state, with the retry delay in ms", () => {
    catalog.on("amqp", (event) => {
      expectTypeOf(event).toEqualTypeOf<AmqpEvent>();
      if (event.state === "down") {
        expectTypeOf(event.retryInMs).toEqualTypeOf<number>();
        expectTypeOf(event.error).toEqualTypeOf<Error>();
        // The pre-release `retryInSeconds` is gone.
        expectTypeOf(event).not.toHaveProperty("retryInSeconds");
      } else {
        expectTypeOf(event).toEqualTypeOf<{ state: "up"; url: string }>();
        // @ts-expect-error: an `up` event carries no delay
        event.retryInMs;
      }
    });
  });

  it("rejects unknown events and wrong listeners", () => {
    // @ts-expect-error: the catalog never emits `error`
    catalog.on("error", (error: Error) => void error);
    // @ts-expect-error: there is no `notice` event (notices are counted in `wake`)
    catalog.on("notice", () => {});
    // @ts-expect-error: the wake payload is an object, not the reason
    catalog.on("wake", (reason: WakeReason) => void reason);
    // @ts-expect-error: not every amqp event has retryInMs
    catalog.on("amqp", (event: { state: "down"; error: Error; retryInMs: number }) => void event);
  });

  it("gives the plain ErmrestCatalog no events at all", () => {
    // @ts-expect-error: `wake` belongs to PollingErmrestCatalog
    plain.on("wake", () => {});
    // @ts-expect-error: nor any other name
    plain.on("claimed", () => {});
  });
});
