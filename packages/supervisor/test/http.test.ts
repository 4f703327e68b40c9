import { request } from "node:http";
import { requestWithHost } from "@x/test-support/http-host";
import { parsePrometheusText, promtool, promtoolCheck, sampleValue } from "@x/test-support/prometheus";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it } from "vitest";
import { parseServeArgs } from "../src/cli-args.js";
import { type QueueView, startSupervisor } from "../src/index.js";
import { escapeHtml, formatDuration } from "../src/queue-page.js";
import { listeningLine, runCli } from "./cli-process.js";
import { exchange, paths, RawConnection } from "./harness.js";
import { readDb } from "./helpers.js";
import { getText, startWithHttp, writeFetcherFile } from "./http-page.js";

const evil = `<script>alert("x")</script> & 'quoted'`;

/** Two fetchers: `alpha` (a..e) and `beta` (c, f, g); `alpha`'s `b` carries a script tag. */
function twoFetchers(p: ReturnType<typeof paths>): void {
  writeFetcherFile(p, "alpha", 1700000000, ["a 1 2", `b ${evil}`, "c 1 2", "d 1 2", "e 1 2"]);
  writeFetcherFile(p, "beta", 1700000100, ["c 3 4", "f 3 4", "g 3 4"]);
}

async function json(url: string): Promise<QueueView> {
  return JSON.parse(await getText(url)) as QueueView;
}

describe("serve --http: the page and /queue.json", () => {
  it("lists the queue in dispatch order: each first entry is what READY hands out next", async () => {
    const p = paths();
    twoFetchers(p);
    const { base } = await startWithHttp(p);
    using worker = await RawConnection.open(p.socket);
    let previous: string | undefined;
    for (let i = 0; i < 8; i++) {
      const view = await json(`${base}/queue.json`);
      expect(view.waiting).toBe(8 - i);
      expect(view.entries.map((e) => e.position)).toEqual(view.entries.map((_, k) => k + 1));
      const next = view.entries.find((e) => !e.held)!;
      const command = previous === undefined ? "READY\n" : `DONE ${previous} 0\n`;
      expect(await worker.send(command)).toBe(`JOB ${next.attrPath} ${next.payload}\n`);
      previous = next.attrPath;
    }
    const done = await json(`${base}/queue.json`);
    expect(done.waiting).toBe(0);
    expect(done.running.map((j) => j.attrPath)).toEqual([previous]);
    expect(done.finished).toHaveLength(6); // 8 jobs of 7 paths, the last one running
  });

  it("shows running jobs, finishes with exit codes and durations, runs and cycle times as the database has them", async () => {
    const p = paths();
    twoFetchers(p);
    const { base } = await startWithHttp(p);
    expect(await exchange(p.socket, "READY\n")).toMatch(/^JOB /);
    const first = (await exchange(p.socket, "READY\n")).split(" ")[1]!;
    await exchange(p.socket, `DONE ${first} 3\n`);
    const view = await json(`${base}/queue.json`);
    // in the page's order (running: oldest first): two jobs can start in different seconds
    const log = readDb(p.db, (db) =>
      db.prepare("SELECT * FROM log ORDER BY started, attr_path").all(),
    ) as Array<{
      attr_path: string;
      started: number;
      finished: number | null;
      exit_code: number | null;
    }>;
    expect(view.running).toEqual(
      log
        .filter((r) => r.finished === null)
        .map((r) => ({
          attrPath: r.attr_path,
          holder: null,
          started: r.started * 1000,
          elapsedMs: view.now - r.started * 1000,
        })),
    );
    // Times are epoch milliseconds: what `new Date()` takes.
    expect(Math.abs(view.now - Date.now())).toBeLessThan(60_000);
    expect(view.finished).toEqual(
      log
        .filter((r) => r.finished !== null)
        .map((r) => ({
          attrPath: r.attr_path,
          exitCode: r.exit_code,
          started: r.started * 1000,
          finished: r.finished! * 1000,
          durationMs: (r.finished! - r.started) * 1000,
        })),
    );
    expect(view.finished[0]!.exitCode).toBe(3);
    expect(view.fetcherRuns).toEqual([
      { fetcher: "alpha", runStarted: 1700000000, isComplete: true, linesRead: 5 },
      { fetcher: "beta", runStarted: 1700000100, isComplete: true, linesRead: 3 },
    ]);
    // First pass not finished for either fetcher: no cycle time yet.
    expect(view.cycles.map((c) => [c.fetcher, c.cycleMs])).toEqual([
      ["alpha", null],
      ["beta", null],
    ]);
  });

  it("the cycle time is now minus the last start of the fetcher's next entry once every entry ran", async () => {
    const p = paths();
    writeFetcherFile(p, "solo", 1, ["a 1", "b 1"]);
    const { sup, base } = await startWithHttp(p);
    // Both ran once, at known times (as the original or an earlier daemon would have recorded them).
    sup.storage.db.exec("INSERT INTO log VALUES ('a', 1000, 1100, 0), ('b', 2000, 2100, 0)");
    sup.storage.db.exec("UPDATE queue SET is_dequeued = 0");
    const view = await json(`${base}/queue.json`);
    expect(view.entries.map((e) => e.attrPath)).toEqual(["a", "b"]);
    expect(view.cycles).toEqual([{ fetcher: "solo", waiting: 2, cycleMs: view.now - 1_000_000 }]);
    expect(view.entries[0]).toMatchObject({ waitingSince: 1_100_000, lastStarted: 1_000_000 });
    const page = await getText(`${base}/`);
    expect(page).toContain(`<td class="n">${formatDuration(view.now - 1_000_000)}</td>`);
    // The metric stays in seconds: the same figure, read at the scrape's own (later) whole second.
    const cycle = sampleValue(
      parsePrometheusText(await getText(`${base}/metrics`)),
      "x_supervisor_fetcher_cycle_seconds",
      {
        fetcher: "solo",
      },
    );
    expect(cycle).toBeGreaterThanOrEqual(Math.floor(view.now / 1000) - 1000);
    expect(cycle).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) - 1000);
    expect(Number.isInteger(cycle)).toBe(true);
  });

  it("HTML-escapes everything from fetcher files: a <script> payload is text", async () => {
    const p = paths();
    twoFetchers(p);
    writeFetcherFile(p, "<b>fetch&er", 5, [`x<img/src=x/onerror=alert(1)> ${evil}`]);
    const { base } = await startWithHttp(p);
    const page = await getText(`${base}/`);
    expect(page).toContain(escapeHtml(evil));
    expect(page).toContain("&lt;b&gt;fetch&amp;er");
    expect(page).toContain("x&lt;img/src=x/onerror=alert(1)&gt;");
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("<img");
    expect(page).not.toContain("<b>");
    // exactly one script element: the page's own refresh
    expect(page.match(/<script/g)).toHaveLength(1);
  });

  it("pages a large queue: fixed-size pages with continuing positions and links", async () => {
    const p = paths();
    writeFetcherFile(
      p,
      "many",
      1,
      Array.from({ length: 25 }, (_, i) => `pkg${String(i).padStart(2, "0")} v${i}`),
    );
    const { base } = await startWithHttp(p, { pageSize: 10 });
    const pages = await Promise.all([1, 2, 3, 4].map((n) => json(`${base}/queue.json?page=${n}`)));
    expect(pages.map((v) => v.entries.length)).toEqual([10, 10, 5, 0]);
    expect(pages[1]!.entries[0]!.position).toBe(11);
    const all = pages.flatMap((v) => v.entries.map((e) => e.attrPath));
    expect(new Set(all).size).toBe(25);
    const html = await getText(`${base}/?page=2`);
    expect(html).toContain("Queue, page 2 of 3");
    expect(html).toContain('href="?page=3"');
    expect(html).toContain('href="?page=1"');
    expect((await json(`${base}/queue.json?page=bogus`)).page).toBe(1);
  });

  it("is read-only and listens on loopback by default", async () => {
    const p = paths();
    const { sup, base } = await startWithHttp(p);
    expect(sup.httpAddress()!.host).toBe("127.0.0.1");
    for (const method of ["POST", "PUT", "DELETE"]) {
      const response = await fetch(`${base}/`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("GET, HEAD");
    }
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const head = await fetch(`${base}/queue.json`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const page = await fetch(`${base}/`);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'sha256-/);
  });

  it("--http takes HOST:PORT, [IPv6]:PORT, or a bare PORT on 127.0.0.1", () => {
    const http = (address: string) => parseServeArgs(["a.db", "fetchers", "s.sock", "--http", address]).http;
    expect(http("9100")).toEqual({ host: "127.0.0.1", port: 9100, allowedHosts: [] });
    expect(http("0.0.0.0:9100")).toEqual({ host: "0.0.0.0", port: 9100, allowedHosts: [] });
    expect(http("[::1]:9100")).toEqual({ host: "::1", port: 9100, allowedHosts: [] });
    expect(() => http("99999")).toThrow(/--http: .*HOST:PORT/);
    expect(() => http("host")).toThrow(/HOST:PORT/);
  });

  it("--http-host NAME, repeatable, adds the names the page answers for; it needs --http", () => {
    const serve = (...flags: string[]) => parseServeArgs(["a.db", "fetchers", "s.sock", ...flags]);
    expect(serve("--http", "9100", "--http-host", "queue.example.org", "--http-host", "box").http).toEqual({
      host: "127.0.0.1",
      port: 9100,
      allowedHosts: ["queue.example.org", "box"],
    });
    expect(() => serve("--http-host", "box")).toThrow(/--http-host needs --http/);
    expect(() => serve("--http", "9100", "--http-host", "box:9100")).toThrow(
      /--http-host: "box:9100" is not a host name/,
    );
  });

  it("answers 421 to a Host it does not serve, so that a web page cannot read the queue through DNS rebinding", async () => {
    const p = paths();
    twoFetchers(p);
    const { sup, base } = await startWithHttp(p, { allowedHosts: ["queue.example.org"] });
    const { port } = sup.httpAddress()!;
    for (const path of ["/", "/queue.json", "/metrics"]) {
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `[::1]:${port}`,
        `queue.example.org:${port}`,
      ]) {
        expect((await requestWithHost(`${base}${path}`, host)).status, `${host} ${path}`).toBe(200);
      }
      for (const host of [`attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`, "example.org"]) {
        const { status, body } = await requestWithHost(`${base}${path}`, host);
        expect(status, `${host} ${path}`).toBe(421);
        expect(body).not.toContain("alpha");
      }
    }
    await expect(
      startSupervisor({
        db: `${p.db}2`,
        fetchersDir: p.fetchersDir,
        socket: `${p.socket}2`,
        http: { port: 0, allowedHosts: ["a:1"] },
      }),
    ).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
      message: expect.stringMatching(/http\.allowedHosts\.0.*host name/),
    });
  });

  it("answers workers while a slow HTTP client holds a connection open", async () => {
    const p = paths();
    twoFetchers(p);
    const { base } = await startWithHttp(p);
    const url = new URL(base);
    // A client that sends half a request and stalls.
    const stalled = request({ host: url.hostname, port: url.port, method: "GET", path: "/" });
    stalled.on("error", () => {});
    stalled.flushHeaders();
    expect(await exchange(p.socket, "READY\n")).toMatch(/^JOB /);
    stalled.destroy();
  });
});

describe("serve --http: /metrics", () => {
  const checker = promtool
    ? `promtool check metrics (${promtool}) and a strict parser`
    : "a strict text-format parser (promtool not installed)";

  it(`passes ${checker}, and its values match the database and the daemon`, async () => {
    const p = paths();
    twoFetchers(p);
    const { sup, base } = await startWithHttp(p);
    using idle = await RawConnection.open(p.socket); // one open connection
    expect(await idle.send("READY\n")).toMatch(/^JOB /);
    const second = (await exchange(p.socket, "READY\n")).split(" ")[1]!;
    await exchange(p.socket, `DONE ${second} 3\n`);
    await exchange(p.socket, "DONE nothing 0\n");
    await exchange(p.socket, "HELLO\n"); // rejected
    await exchange(p.socket, `DONE ${second} 1000\n`);
    await waitFor(() => sup.stats().commandsRejected === 1, 20_000, "the rejection");
    const text = await getText(`${base}/metrics`);
    if (promtool) {
      const { status, output } = promtoolCheck(text);
      expect(output).toBe("");
      expect(status).toBe(0);
    }
    const samples = parsePrometheusText(text);
    const depth = readDb(p.db, (db) =>
      db
        .prepare(
          `SELECT name, count(*) AS n FROM (SELECT fetcher_id, is_dequeued, max(fetcher_run_started)
             FROM queue GROUP BY attr_path, fetcher_id) JOIN fetchers USING (fetcher_id)
           WHERE is_dequeued = 0 GROUP BY name`,
        )
        .all(),
    ) as Array<{ name: string; n: number }>;
    expect(depth.length).toBe(2);
    for (const { name, n } of depth) {
      expect(sampleValue(samples, "x_supervisor_queue_depth", { fetcher: name })).toBe(n);
    }
    const dispatched = readDb(
      p.db,
      (db) => (db.prepare("SELECT count(*) AS n FROM log").get() as { n: number }).n,
    );
    expect(sampleValue(samples, "x_supervisor_dispatches_total")).toBe(dispatched); // five paths, once each
    expect(sampleValue(samples, "x_supervisor_dispatches_total")).toBe(sup.stats().dispatched);
    const running = readDb(
      p.db,
      (db) => (db.prepare("SELECT count(*) AS n FROM log WHERE finished IS NULL").get() as { n: number }).n,
    );
    expect(sampleValue(samples, "x_supervisor_jobs_running")).toBe(running);
    expect(sampleValue(samples, "x_supervisor_done_total", { exit_code: "3" })).toBe(1);
    expect(sampleValue(samples, "x_supervisor_done_total", { exit_code: "0" })).toBe(1);
    expect(sampleValue(samples, "x_supervisor_done_total", { exit_code: "other" })).toBe(1);
    expect(sampleValue(samples, "x_supervisor_commands_rejected_total", { reason: "unknown-command" })).toBe(
      1,
    );
    expect(sampleValue(samples, "x_supervisor_commands_rejected_total", { reason: "bad-done" })).toBe(0);
    expect(sampleValue(samples, "x_supervisor_connections_total")).toBe(sup.stats().connections);
    expect(sampleValue(samples, "x_supervisor_connections_open")).toBe(1);
    expect(sampleValue(samples, "x_supervisor_lines_ingested_total")).toBe(8);
    // Every job reply was timed: READY→JOB and DONE→JOB.
    expect(sampleValue(samples, "x_supervisor_job_latency_seconds_count", { command: "READY" })).toBe(2);
    expect(sampleValue(samples, "x_supervisor_job_latency_seconds_count", { command: "DONE" })).toBe(
      sup.stats().dispatched - 2,
    );
    const wal = sampleValue(samples, "x_supervisor_wal_size_bytes")!;
    expect(wal).toBeGreaterThan(0);
    expect(sampleValue(samples, "x_supervisor_checkpoint_pause_seconds_count")).toBe(0);
    expect(await sup.metrics()).toContain("x_supervisor_queue_depth");
  });

  it("the strict parser rejects what promtool rejects", () => {
    expect(() => parsePrometheusText("# TYPE x_requests counter\nx_requests 1\n")).toThrow(/_total/);
    expect(() => parsePrometheusText("x_total 1\n")).toThrow(/before its TYPE/);
    expect(() => parsePrometheusText('# TYPE a gauge\na{b="c} 1\n')).toThrow(/not a sample|bad labels/);
    expect(() => parsePrometheusText("# TYPE a gauge\na one\n")).toThrow(/bad value/);
  });

  it("x-supervisor serve --http: curl HOST:PORT/metrics works on the CLI daemon, --http-host adds a name", async () => {
    const p = paths();
    twoFetchers(p);
    const proc = runCli([
      "serve",
      p.db,
      p.fetchersDir,
      p.socket,
      "--http",
      "127.0.0.1:0",
      "--http-host",
      "metrics.example.org",
      "--log-json",
    ]);
    try {
      const http = (await listeningLine(proc)).http!;
      expect(http.host).toBe("127.0.0.1");
      const metrics = `http://127.0.0.1:${http.port}/metrics`;
      expect((await requestWithHost(metrics, `metrics.example.org:${http.port}`)).status).toBe(200);
      expect((await requestWithHost(metrics, `attacker.example:${http.port}`)).status).toBe(421);
      const text = await getText(`http://127.0.0.1:${http.port}/metrics`);
      if (promtool) expect(promtoolCheck(text).status).toBe(0);
      const samples = parsePrometheusText(text);
      expect(sampleValue(samples, "x_supervisor_queue_depth", { fetcher: "alpha" })).toBe(5);
      expect(sampleValue(samples, "x_supervisor_queue_depth", { fetcher: "beta" })).toBe(3);
    } finally {
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
  });
});
