import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { amqpUrlFor } from "./amqp-address.js";
import { PollingErmrestCatalog } from "./index.js";

describe("amqpUrlFor", () => {
  it("defaults to the catalog's host without its port", () => {
    expect(amqpUrlFor(undefined, "ermrest.example.org:8443")).toBe("amqp://ermrest.example.org?heartbeat=60");
    expect(amqpUrlFor(undefined, "[::1]:8080")).toBe("amqp://[::1]?heartbeat=60");
  });

  it("turns host and host:port into amqp URLs", () => {
    expect(amqpUrlFor("broker", "x")).toBe("amqp://broker?heartbeat=60");
    expect(amqpUrlFor("broker:5673", "x")).toBe("amqp://broker:5673?heartbeat=60");
  });

  it("keeps amqp and amqps URLs, adding a heartbeat only when absent", () => {
    expect(amqpUrlFor("amqps://u:p@broker/vh", "x")).toBe("amqps://u:p@broker/vh?heartbeat=60");
    expect(amqpUrlFor("amqp://broker?heartbeat=5", "x")).toBe("amqp://broker?heartbeat=5");
  });

  it.each(["http://broker", "amqp://"])("rejects %s with ERR_X_POLLING_CATALOG_INVALID_OPTION", (value) => {
    expect(() => new PollingErmrestCatalog({ server: "h", catalogId: 1, amqpServer: value })).toThrow(
      expect.objectContaining({ code: "ERR_X_POLLING_CATALOG_INVALID_OPTION" }),
    );
  });

  it("validates noticeExchange and unknown options at construction", () => {
    for (const options of [{ noticeExchange: "" }, { amqpServer: 5 }, { nope: true }]) {
      let error: unknown;
      try {
        new PollingErmrestCatalog({ server: "h", catalogId: 1, ...(options as object) });
      } catch (e) {
        error = e;
      }
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    }
  });
});
