import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { amqpUrlFor, amqpUrlsFor } from "./amqp-address.js";
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

  it("reads several addresses from a list or a string separated by white space", () => {
    const nodes = ["amqp://a?heartbeat=60", "amqp://b:5673?heartbeat=60", "amqps://u:p@c/?heartbeat=5"];
    expect(amqpUrlsFor(["a", "b:5673", "amqps://u:p@c/?heartbeat=5"], "x")).toEqual(nodes);
    expect(amqpUrlsFor(" a\tb:5673\n amqps://u:p@c/?heartbeat=5 ", "x")).toEqual(nodes);
    expect(amqpUrlsFor(undefined, "ermrest.example.org:8443")).toEqual([
      "amqp://ermrest.example.org?heartbeat=60",
    ]);
    const catalog = new PollingErmrestCatalog({ server: "h", catalogId: 1, amqpServer: "a amqp://u:p@b" });
    expect(catalog.amqpUrls).toEqual(["amqp://a?heartbeat=60", "amqp://u:***@b?heartbeat=60"]);
    expect(catalog.amqpUrl).toBe("amqp://a?heartbeat=60 amqp://u:***@b?heartbeat=60");
  });

  it.each([
    [" \n"],
    [[]],
    [["a", ""]],
    [["a", "http://u:secret@b"]],
    [["a", " "]],
    [["amqp://u:secret@a", ""]],
  ])("rejects the address list %j naming amqpServer, never a password", (value) => {
    let error: unknown;
    try {
      new PollingErmrestCatalog({ server: "h", catalogId: 1, amqpServer: value as string[] });
    } catch (e) {
      error = e;
    }
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toContain("amqpServer");
    expect((error as Error).message).not.toContain("secret");
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
