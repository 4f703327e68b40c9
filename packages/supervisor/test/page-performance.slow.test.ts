import { describe, expect, it } from "vitest";
import { exchange, paths } from "./harness.js";
import { getText, startWithHttp, writeFetcherFile } from "./http-page.js";

describe("serve --http with 100 000 queue entries", () => {
  it("renders the first page in under 200 ms (median of 10) and keeps answering workers", async () => {
    const p = paths();
    writeFetcherFile(
      p,
      "bulk",
      1700000000,
      Array.from({ length: 100_000 }, (_, i) => `pkg${String(i).padStart(6, "0")} 1.${i} 1.${i + 1}`),
    );
    const { base } = await startWithHttp(p);
    await getText(`${base}/`); // starts the read thread
    const times: number[] = [];
    let html = "";
    for (let i = 0; i < 10; i++) {
      const start = performance.now();
      const [page, reply] = await Promise.all([getText(`${base}/`), exchange(p.socket, "READY\n")]);
      times.push(performance.now() - start);
      html = page;
      expect(reply).toMatch(/^JOB pkg\d{6} /);
    }
    times.sort((a, b) => a - b);
    expect(html).toContain("Queue, page 1 of 1000");
    expect(html.match(/<tr><td class="n">\d+<\/td>/g)).toHaveLength(100);
    expect(times[5]!).toBeLessThan(200);
  }, 120_000);
});
