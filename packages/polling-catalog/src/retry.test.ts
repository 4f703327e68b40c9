import { describe, expect, it } from "vitest";
import { CatalogResponse } from "./response.js";
import { isRetryableStatus, isTransactionAborted, retryDelayMs } from "./retry.js";

describe("retryDelayMs", () => {
  it("draws with full jitter below 100, 200, 400 and 800 ms without Retry-After", () => {
    const now = Date.now();
    expect([0, 1, 2, 3].map((retry) => retryDelayMs(retry, null, now, () => 0.999_999))).toEqual(
      [100, 200, 400, 800].map((ceiling) => expect.closeTo(ceiling, 0)),
    );
    expect([0, 1, 2, 3].map((retry) => retryDelayMs(retry, null, now, () => 0))).toEqual([0, 0, 0, 0]);
    expect(retryDelayMs(3, null, now, () => 0.5)).toBe(400);
  });

  it("spreads clients that failed together over the whole interval", () => {
    const draws = Array.from({ length: 2_000 }, () => retryDelayMs(0, null));
    expect(Math.min(...draws)).toBeLessThan(10);
    expect(Math.max(...draws)).toBeGreaterThan(90);
    expect(Math.max(...draws)).toBeLessThan(100);
    expect(new Set(draws.map((d) => Math.floor(d / 10))).size).toBe(10);
  });

  it("uses Retry-After in seconds or as an HTTP date, capped at 60 s", () => {
    const now = Date.parse("2024-01-01T00:00:00Z");
    expect(retryDelayMs(0, "3", now)).toBe(3_000);
    expect(retryDelayMs(0, "3600", now)).toBe(60_000);
    expect(retryDelayMs(0, "Mon, 01 Jan 2024 00:00:05 GMT", now)).toBe(5_000);
    expect(retryDelayMs(0, "Sun, 31 Dec 2023 00:00:05 GMT", now)).toBe(0);
    expect(retryDelayMs(1, "soon", now, () => 0.5)).toBe(100);
  });

  it("retries what a server answers under load: 429, 500, 502, 503 and 504 only", () => {
    expect([400, 500, 501, 502, 503, 504, 505, 429].filter(isRetryableStatus)).toEqual([
      500, 502, 503, 504, 429,
    ]);
  });

  it("recognises ERMrest's rolled-back transaction: 503 with the text Transaction aborted.", () => {
    const response = (status: number, body: string) =>
      new CatalogResponse(status, new Headers(), "http://127.0.0.1/ermrest/catalog/1/entity/S:T", body);
    expect(isTransactionAborted(response(503, "Transaction aborted.\n"))).toBe(true);
    expect(isTransactionAborted(response(503, "Service Unavailable"))).toBe(false);
    expect(isTransactionAborted(response(500, "Transaction aborted.\n"))).toBe(false);
  });
});
