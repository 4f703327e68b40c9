import { get } from "node:http";
import { parsePrometheusText, sampleValue } from "@x/test-support/prometheus";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { refusalsLoggedPerWindow, refusalWindowMs } from "../src/connection-refusals.js";
import { SupervisorClient } from "../src/index.js";
import { makePki } from "./certificates.js";
import { listeningLine, runCli } from "./cli-process.js";
import { exchange, paths } from "./harness.js";
import { openDescriptors, openFileSoftLimit, procStatusKb } from "./proc-status.js";
import { tcpFlood } from "./tcp-flood.js";

/** The daemon's descriptor limit: what a default `ulimit -n` gives a service. */
const daemonFileLimit = 1_024;
/** Connections of the flood, and at most this many open at once (within this process's own limit). */
const floodTotal = 10_000;
const floodConcurrency = Math.min(2_000, openFileSoftLimit() - 256);

/** Resolves with what `promise` gives, or with `timedOut` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, timedOut: T): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((resolve) => setTimeout(() => resolve(timedOut), ms).unref()),
  ]);
}

/** GETs `url` on a connection of its own (no keep-alive): its status, or 0 when the request fails. */
function statusOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve) => {
    get(url, { agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    }).on("error", () => resolve(0));
  });
}

describe("the TLS port under a flood of connections that never finish their handshake", () => {
  it("keeps the daemon's descriptors, memory and log bounded, and serves the socket, /metrics and real workers", async () => {
    const p = paths();
    const pki = makePki(p.root);
    const proc = runCli(
      [
        "serve",
        p.db,
        p.fetchersDir,
        p.socket,
        "--max-connections",
        "64",
        "--tls",
        "127.0.0.1:0",
        "--tls-cert",
        pki.server.certFile,
        "--tls-key",
        pki.server.keyFile,
        "--tls-ca",
        pki.ca.caFile,
        "--tls-handshake-timeout",
        "1",
        "--http",
        "127.0.0.1:0",
        "--log-json",
      ],
      {},
      undefined,
      ["prlimit", `--nofile=${daemonFileLimit}:${daemonFileLimit}`, "--"],
    );
    onTestFinished(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    const { tls, http } = await listeningLine(proc);
    const pid = proc.child.pid!;
    const metricsUrl = `http://127.0.0.1:${http!.port}/metrics`;
    // The daemon at rest, after one request of each kind.
    expect(await exchange(p.socket, "READY\n")).toBe("NOJOBS\n");
    expect(await statusOnNewConnection(metricsUrl)).toBe(200);
    const descriptorsBefore = openDescriptors(pid);
    const rssBefore = procStatusKb(pid, "VmRSS");
    const logLinesBefore = proc.stderr().split("\n").length;

    let flooding = true;
    const flood = tcpFlood({
      port: tls!.port,
      total: floodTotal,
      concurrency: floodConcurrency,
      holdMs: 3_000,
      deadlineMs: 40_000,
    }).finally(() => {
      flooding = false;
    });
    const peaks = { descriptors: 0, rssKb: 0 };
    const socketReplies: string[] = [];
    const metricsStatuses: number[] = [];
    while (flooding) {
      peaks.descriptors = Math.max(peaks.descriptors, openDescriptors(pid));
      peaks.rssKb = Math.max(peaks.rssKb, procStatusKb(pid, "VmRSS"));
      const [reply, status] = await Promise.all([
        within(
          exchange(p.socket, "READY\n").catch((error: NodeJS.ErrnoException) => `failed: ${error.code}`),
          5_000,
          "no reply within 5 s",
        ),
        within(statusOnNewConnection(metricsUrl), 5_000, -1),
      ]);
      socketReplies.push(reply);
      metricsStatuses.push(status);
    }
    const { opened, connected, elapsedMs } = await flood;

    expect(opened).toBe(floodTotal);
    expect(connected).toBeGreaterThan(floodTotal * 0.9);
    // Served throughout: every Unix socket probe got its reply, every scrape its metrics.
    expect(socketReplies.length).toBeGreaterThan(2);
    expect(socketReplies.filter((reply) => reply !== "NOJOBS\n")).toEqual([]);
    expect(metricsStatuses.filter((status) => status !== 200)).toEqual([]);
    // Bounded: the handshakes in progress (64 by default), the probes, nothing per flood connection.
    expect(peaks.descriptors).toBeLessThan(descriptorsBefore + 64 + 32);
    expect(peaks.rssKb - rssBefore).toBeLessThan(64 * 1024);
    // A worker with a good certificate is served once the flood stops.
    const worker = await SupervisorClient.connect({
      host: "127.0.0.1",
      port: tls!.port,
      certFile: pki.client.certFile,
      keyFile: pki.client.keyFile,
      caFile: pki.ca.caFile,
    });
    expect(await worker.ready()).toBeNull();
    await worker.close();
    // Every flood connection was refused and counted; the log says so in a few lines, not one per connection.
    await waitFor(
      async () => {
        const text = await (await fetch(metricsUrl)).text();
        const rejected = sampleValue(parsePrometheusText(text), "x_supervisor_connections_rejected_total");
        return rejected !== undefined && rejected >= connected;
      },
      20_000,
      "every flood connection counted as rejected",
    );
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const logLines = proc.stderr().split("\n").slice(logLinesBefore);
    const refusalLines = logLines.filter((line) => line.includes("refused"));
    // At most 10 lines one by one and a summary per 10 s window (the flood's, and the one after it).
    const windows = Math.ceil(elapsedMs / refusalWindowMs) + 1;
    expect(refusalLines.length, `${elapsedMs} ms of flood`).toBeLessThanOrEqual(
      windows * (refusalsLoggedPerWindow + 1),
    );
    expect(refusalLines.some((line) => /refused \d+ more connections in the last/.test(line))).toBe(true);
  }, 90_000);
});
