import { describe, expect, it } from "vitest";
import { maskSecrets, redactUrl, secretsOf } from "./redact.js";

describe("redactUrl", () => {
  it("shows the password as *** and keeps the rest", () => {
    expect(redactUrl("amqp://agent:s3cret@broker:5672/vh?heartbeat=5")).toBe(
      "amqp://agent:***@broker:5672/vh?heartbeat=5",
    );
    expect(redactUrl("amqps://:s3cret@broker")).toBe("amqps://:***@broker");
    expect(redactUrl("amqp://broker")).toBe("amqp://broker");
    expect(redactUrl("amqp://agent@broker")).toBe("amqp://agent@broker");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it.each([
    [
      "a password with an unencoded / (read as a port and a path)",
      "amqp://agent:12/s3cret@broker",
      "amqp://***@broker",
    ],
    ["a password with an unencoded @", "amqp://agent:s3@cret@broker", "amqp://***@broker"],
    ["a password with an unencoded #", "amqp://agent:s3#cret@broker", "amqp://***@broker"],
    ["a password with an unencoded ?", "amqp://agent:1?s3cret@broker", "amqp://***@broker"],
    ["a URL that does not parse", "amqp://agent:s3cret@[broken", "amqp://***@[broken"],
    ["a scheme without authority", "x:agent:s3cret@broker", "***@broker"],
  ])("masks everything up to the last @ for %s", (_case, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});

describe("secretsOf and maskSecrets", () => {
  it("mask each credential, whole and each cookie value of 6 characters or more, longest first", () => {
    const secrets = secretsOf({ cookie: "webauthn=abcdefghij; lang=en", bearerToken: "tok3n-value" });
    expect(secrets).toEqual(["webauthn=abcdefghij; lang=en", "tok3n-value", "abcdefghij"]);
    expect(
      maskSecrets("Cookie: webauthn=abcdefghij; lang=en; token tok3n-value; again abcdefghij; en", secrets),
    ).toBe("Cookie: ***; token ***; again ***; en");
    expect(secretsOf({})).toEqual([]);
    expect(maskSecrets("nothing to hide", secrets)).toBe("nothing to hide");
  });
});
