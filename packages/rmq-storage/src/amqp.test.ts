import { describe, expect, it } from "vitest";
import { deadQueueArguments, queueArguments, topology, topologyNames } from "./amqp.js";
import { workerQueues } from "./routing.js";

const spec = workerQueues.find((q) => q.name === "content_add.unknown.0");

describe("topology names", () => {
  it("puts a '.' between a prefix and every exchange and queue name, dead letters included", () => {
    const top = topology("tenant1");
    expect(top.exchange("content")).toBe("tenant1.content");
    expect(spec && top.queue(spec)).toBe("tenant1.content_add.unknown.0");
    expect(spec && queueArguments(top, spec)["x-dead-letter-exchange"]).toBe("tenant1.content.dead");
    const names = topologyNames(top);
    expect(names.queues).toHaveLength(160);
    expect(
      [...names.queues, ...names.deadQueues, ...names.exchanges].every((n) => n.startsWith("tenant1.")),
    ).toBe(true);
  });

  it("adds no second '.' to a prefix that ends with one, and none to the empty prefix", () => {
    expect(topology("tenant1.").exchange("content")).toBe("tenant1.content");
    expect(topology("").exchange("content")).toBe("content");
    expect(spec && topology("").queue(spec)).toBe("content_add.unknown.0");
  });
});

describe("queue arguments", () => {
  it("classic queues: single active consumer and a dead-letter exchange, nothing else", () => {
    expect(spec && queueArguments(topology(""), spec)).toEqual({
      "x-single-active-consumer": true,
      "x-dead-letter-exchange": "content.dead",
    });
    expect(deadQueueArguments()).toEqual({});
  });

  it("quorum queues add the type, the delivery limit and at-least-once dead-lettering", () => {
    expect(spec && queueArguments(topology(""), spec, { type: "quorum", deliveryLimit: 7 })).toEqual({
      "x-single-active-consumer": true,
      "x-dead-letter-exchange": "content.dead",
      "x-queue-type": "quorum",
      "x-delivery-limit": 7,
      "x-dead-letter-strategy": "at-least-once",
      "x-overflow": "reject-publish",
    });
    expect(deadQueueArguments({ type: "quorum", deliveryLimit: 7 })).toEqual({ "x-queue-type": "quorum" });
  });
});
