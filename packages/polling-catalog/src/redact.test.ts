import { describe, expect, it } from "vitest";
import { maskSecrets, secretsOf } from "./redact.js";

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
