import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactUrl } from "./redact.js";

/** A secret nobody would print by accident, with the characters that make URLs hard (but not & or #). */
const secret = fc
  .string({ unit: "binary-ascii", minLength: 1, maxLength: 20 })
  .map((s) => `PW${s.replace(/[&#]/g, "")}SECRET`);

describe("redactUrl under fuzzing", () => {
  it("never shows a secret query parameter or libpq setting, whatever the value and the rest", async () => {
    await checkProperty(
      "core: redactUrl parameters",
      fc.property(
        fc.constantFrom("postgres://", "postgresql://", "amqp://", "https://", ""),
        fc.constantFrom("", "u@", "u:p@", "u:PWxSECRET@"),
        fc.constantFrom("password", "sslpassword", "PASSWORD", "pass%77ord", "access_token", "api-key"),
        secret,
        fc.string({ unit: "binary-ascii", maxLength: 10 }),
        (scheme, user, name, value, other) => {
          const url = `${scheme}${user}db:5432/x?a=${encodeURIComponent(other)}&${name}=${value}&b=1`;
          const shown = redactUrl(url);
          expect(shown).not.toContain("SECRET");
          expect(shown).not.toContain(encodeURIComponent("SECRET"));
          const quoted = `host=db ${name.replace("%77", "w")}='${value.replace(/['\\]/g, "\\$&")}' dbname=x`;
          expect(redactUrl(quoted)).not.toContain("SECRET");
        },
      ),
    );
  });
});
