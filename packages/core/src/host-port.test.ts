import { describe, expect, it } from "vitest";
import { parseHostPort, parseListenAddress } from "./host-port.js";

describe("parseHostPort", () => {
  it.each([
    ["127.0.0.1:9100", { host: "127.0.0.1", port: 9100 }],
    ["db.example:0", { host: "db.example", port: 0 }],
    ["[::1]:65535", { host: "::1", port: 65_535 }],
  ])("reads %s", (text, address) => {
    expect(parseHostPort("--tls", text)).toEqual(address);
  });

  it.each(["9100", "host", "host:", ":9100", "::1:9100", "host:65536", "host:123456", "[::1]9100"])(
    "refuses %j with ERR_X_USAGE naming the flag",
    (text) => {
      expect(() => parseHostPort("--tls", text)).toThrow(
        expect.objectContaining({ code: "ERR_X_USAGE", message: expect.stringContaining("--tls: ") }),
      );
    },
  );
});

describe("parseListenAddress", () => {
  it("takes a bare port on the loopback address", () => {
    expect(parseListenAddress("--metrics", "9100")).toEqual({ host: "127.0.0.1", port: 9100 });
  });

  it("takes HOST:PORT and [IPv6]:PORT as they are", () => {
    expect(parseListenAddress("--metrics", "0.0.0.0:9100")).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(parseListenAddress("--metrics", "[::1]:9100")).toEqual({ host: "::1", port: 9100 });
  });

  it.each(["99999", "host", ""])("refuses %j", (text) => {
    expect(() => parseListenAddress("--metrics", text)).toThrow(/--metrics: .* is not HOST:PORT/);
  });

  it("names a bad bare port as it was given, not as the loopback address it stood for", () => {
    expect(() => parseListenAddress("--http", "99999")).toThrow(
      '--http: "99999" is not HOST:PORT, [IPv6]:PORT or a bare PORT (0 to 65 535)',
    );
  });
});
