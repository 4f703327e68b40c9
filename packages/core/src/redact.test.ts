import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { inspectAs, inspectCustom, redactedMark, redactUrl } from "./redact.js";

describe("redactUrl", () => {
  it("replaces the password and keeps the rest", () => {
    expect(redactUrl("amqp://user:s3cret-pw@host:5672/vh")).toBe("amqp://user:***@host:5672/vh");
    expect(redactUrl("postgres://postgres:s3cret-pw@db/x?schema=a")).toBe(
      "postgres://postgres:***@db/x?schema=a",
    );
  });

  it("leaves URLs without a password alone", () => {
    expect(redactUrl("amqp://host/")).toBe("amqp://host/");
    expect(redactUrl("amqp://user@host/")).toBe("amqp://user@host/");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it("masks everything up to the last @ when the password holds an unencoded @, / or #", () => {
    for (const url of [
      "amqp://u:p@ss-word1@host/",
      "amqp://u:pa/ss-word1@host/",
      "amqp://u:pa#ss-word1@host/",
    ]) {
      const shown = redactUrl(url);
      expect(shown).not.toContain("ss-word1");
      expect(shown).toBe(`amqp://${redactedMark}@host/`);
    }
    expect(redactUrl("amqp://u:s3cret-pw@[bad/")).toBe("amqp://***@[bad/");
  });

  it.each([
    ["a password with an unencoded ?", "amqp://agent:1?s3cret@broker", "amqp://***@broker"],
    ["a scheme without authority", "x:agent:s3cret@broker", "***@broker"],
    ["a password and no user", "amqps://:s3cret@broker", "amqps://:***@broker"],
  ])("masks %s", (_case, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});

describe("inspectAs", () => {
  it("shows the shape under the class name, and nothing below depth 0", () => {
    class Holder {
      [inspect.custom](depth: number, options: object, insp: typeof inspect) {
        return inspectAs("Holder", { url: "amqp://u:***@h/" }, depth, options, insp);
      }
    }
    expect(inspect(new Holder())).toBe("Holder { url: 'amqp://u:***@h/' }");
    expect(inspect({ a: { b: new Holder() } }, { depth: 1 })).toContain("Holder {}");
  });
});

describe("inspectCustom", () => {
  it("is util.inspect.custom", () => {
    expect(inspectCustom).toBe(inspect.custom);
  });
});
