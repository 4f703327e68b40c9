import { XError } from "@x/core";
import { checkProperty, hostileString, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { amqpUrlFor } from "./amqp-address.js";
import { ErrorCode } from "./errors.js";
import { redactUrl } from "./redact.js";
import { CatalogResponse } from "./response.js";
import { isTransactionAborted, retryDelayMs } from "./retry.js";

const isInvalidOption = (error: unknown) => XError.is(error, ErrorCode.INVALID_OPTION);

/** Retry-After values as servers and proxies send them: seconds, dates, and anything else. */
const retryAfter = fc.oneof(
  hostileString(),
  fc.nat().map(String),
  fc.date({ noInvalidDate: true }).map((date) => date.toUTCString()),
  fc.constantFrom(
    "0",
    "-1",
    "1.5",
    " 5 ",
    "9".repeat(30),
    "Thu, 01 Jan 1970 00:00:00 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT",
  ),
);

/** A password nobody would print by accident, with the characters that make URLs hard. */
const password = fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 20 }).map((s) => `PW${s}SECRET`);

describe("polling-catalog parsers under fuzzing", () => {
  it("a Retry-After header is a wait from 0 to 60 s, whatever it holds", async () => {
    await checkProperty(
      "polling-catalog: Retry-After",
      fc.property(fc.integer({ min: 0, max: 50 }), retryAfter, (retry, header) => {
        const waitMs = retryDelayMs(retry, header, Date.now(), Math.random);
        expect(Number.isFinite(waitMs)).toBe(true);
        expect(waitMs).toBeGreaterThanOrEqual(0);
        expect(waitMs).toBeLessThanOrEqual(60_000);
      }),
    );
  });

  it("a 503 body is a rolled-back transaction or not, whatever it holds", async () => {
    await checkProperty(
      "polling-catalog: Transaction aborted",
      fc.property(fc.integer({ min: 100, max: 599 }), hostileString(), (status, body) => {
        const aborted = isTransactionAborted(new CatalogResponse(status, new Headers(), "http://h/", body));
        expect(aborted).toBe(status === 503 && body.includes("Transaction aborted."));
      }),
    );
  });

  it("amqpServer is an amqp(s) URL or an INVALID_OPTION that never shows its password", async () => {
    await checkProperty(
      "polling-catalog: amqpServer",
      fc.property(
        fc.oneof(
          hostileString(),
          fc
            .tuple(fc.constantFrom("amqp://", "amqps://", "http://", ""), password, hostileString())
            .map(([scheme, pw, rest]) => `${scheme}agent:${pw}@${rest}`),
        ),
        hostileString(),
        (amqpServer, server) => {
          let url: string | undefined;
          try {
            url = amqpUrlFor(amqpServer, server || "h");
          } catch (error) {
            expect(isInvalidOption(error)).toBe(true);
            const pw = /agent:(PW.*SECRET)@/s.exec(amqpServer)?.[1];
            if (pw) expect((error as Error).message).not.toContain("SECRET");
            return;
          }
          expect(url).toMatch(/^amqps?:\/\/[^/?#]/);
          const parsed = new URL(url);
          expect(parsed.searchParams.has("heartbeat")).toBe(true);
          // What the catalog shows as its amqpUrl: not the password amqplib will send.
          if (parsed.password.length >= 3) expect(redactUrl(url)).not.toContain(parsed.password);
        },
      ),
    );
  });

  it("redactUrl never shows a password, whatever the string", async () => {
    await checkProperty(
      "polling-catalog: redactUrl",
      fc.property(
        fc.constantFrom("amqp://", "amqps://", "http://", "", "//", "x:"),
        fc.string({ unit: "binary-ascii", maxLength: 10 }),
        password,
        hostileString(),
        (scheme, user, pw, rest) => {
          const url = `${scheme}${user}:${pw}@${rest}`;
          const shown = parsesOrRejects(
            () => redactUrl(url),
            () => false,
          ) as string;
          expect(shown).not.toContain("SECRET");
          expect(shown).not.toContain(encodeURIComponent("SECRET"));
        },
      ),
    );
  });
});
