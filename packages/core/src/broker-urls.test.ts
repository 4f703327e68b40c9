import { describe, expect, it } from "vitest";
import { brokerUrls, redactUrls, splitUrls, urlAt, urlList } from "./broker-urls.js";

describe("broker URL lists", () => {
  it("splits the nodes of a cluster on any white space", () => {
    expect(splitUrls(" amqp://a/\n amqp://b/\tamqp://c/ ")).toEqual(["amqp://a/", "amqp://b/", "amqp://c/"]);
    expect(splitUrls("  \n")).toEqual([]);
    expect(brokerUrls(" amqp://a/\n")).toBe("amqp://a/");
    expect(brokerUrls("amqp://a/ amqp://b/")).toEqual(["amqp://a/", "amqp://b/"]);
  });

  it("lists and redacts one URL or several", () => {
    expect(urlList("amqp://a/")).toEqual(["amqp://a/"]);
    expect(urlList(["amqp://a/", "amqp://b/"])).toEqual(["amqp://a/", "amqp://b/"]);
    expect(redactUrls("amqp://u:secret@a/")).toBe("amqp://u:***@a/");
    expect(redactUrls(["amqp://u:secret@a/", "amqp://b/"])).toEqual(["amqp://u:***@a/", "amqp://b/"]);
  });

  it("rotates through the addresses", () => {
    const urls = ["a", "b", "c"];
    expect([0, 1, 2, 3, 4, 7].map((turn) => urlAt(urls, turn))).toEqual(["a", "b", "c", "a", "b", "b"]);
    expect(() => urlAt([], 0)).toThrow(RangeError);
  });
});
