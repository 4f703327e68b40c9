import { describe, expect, it } from "vitest";
import { allowedHostsSchema, parseHostName, servedHostNames, servesHost } from "./served-hosts.js";

describe("servesHost", () => {
  const served = servedHostNames("127.0.0.1", ["Queue.Example.org", "box"]);

  it("serves IP addresses, localhost, the listening host and the allowed names, with or without a port", () => {
    for (const host of [
      "127.0.0.1:9180",
      "127.0.0.1",
      "[::1]:9180",
      "[::1]",
      "10.1.2.3:80",
      "localhost:9180",
      "LOCALHOST",
      "localhost.:9180",
      "queue.example.org",
      "queue.example.org.:443",
      "box:9180",
      undefined,
    ]) {
      expect(servesHost(host, served), String(host)).toBe(true);
    }
    expect(servesHost("metrics.lan:9464", servedHostNames("metrics.lan"))).toBe(true);
  });

  it("refuses any other name, and what is not a host", () => {
    for (const host of [
      "attacker.example:9180",
      "127.0.0.1.attacker.example:9180",
      "localhost.attacker.example",
      "sub.queue.example.org",
      "box.attacker.example",
      "127.1:9180",
      "0x7f000001",
      "",
      "[::1",
      "[not-v6]:80",
      "::1",
      "host:port",
      "host:123456",
      "a b",
    ]) {
      expect(servesHost(host, served), host).toBe(false);
    }
  });
});

describe("allowed host names", () => {
  it("takes host names, refuses ports, schemes, paths and wildcards", () => {
    expect(parseHostName("--http-host", "queue.example.org")).toBe("queue.example.org");
    expect(parseHostName("--http-host", "box")).toBe("box");
    for (const bad of [
      "box:9180",
      "http://box",
      "box/queue",
      "*.example.org",
      "",
      "-box",
      "a..b",
      "x".repeat(254),
    ]) {
      expect(() => parseHostName("--http-host", bad), bad).toThrow(
        expect.objectContaining({ code: "ERR_X_USAGE", message: expect.stringContaining("--http-host") }),
      );
    }
    expect(allowedHostsSchema.parse(undefined)).toEqual([]);
    expect(allowedHostsSchema.parse(["a.example", "b"])).toEqual(["a.example", "b"]);
    expect(() => allowedHostsSchema.parse(["a.example:80"])).toThrow(/host name/);
    expect(() => allowedHostsSchema.parse("a.example")).toThrow(/list of host names/);
  });
});
