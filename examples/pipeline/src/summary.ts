import type { LiveState, Report } from "./pipeline.js";

const count = (n: number) => n.toLocaleString("en-US");
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const mix = (report: Report, runner: string, kinds: string[]) =>
  kinds.map((kind) => count(report.mix[`${runner} ${kind}`] ?? 0)).join(" / ");

/** The one-line progress text drawn on a terminal while the run goes on. */
export function progressText(live: LiveState): string {
  const { outcomes: o, total } = live;
  const done = o.ok + o.failed + o.timedOut + o.memory + o.other;
  if (live.stage !== "running") return `@x demo: ${live.stage}…`;
  const elapsed = (performance.now() - live.startedAt) / 1000;
  const rate = elapsed > 0 ? Math.round(done / elapsed) : 0;
  const results = live.paused
    ? `results ${count(live.consumed)} ⏸ paused`
    : `results ${count(live.consumed)}`;
  return [
    `jobs ${count(done)}/${count(total)}`,
    `ok ${count(o.ok)}`,
    `failed ${o.failed}`,
    `timed out ${o.timedOut}`,
    `memory ${o.memory}`,
    results,
    `${rate} jobs/s`,
    `queued ${count(live.ingested)}`,
  ].join(" · ");
}

/** The summary table printed at the end (stdout). */
export function formatSummary(report: Report): string {
  const { outcomes: o, guards: g, results: r, storage: s, catalog: c } = report;
  const rows: Array<[string, string, string]> = [
    ["fetcher", `jobs written to ${report.fetcher.file}`, count(report.fetcher.lines)],
    ["", "  inline jobs: ok / fail / stall", mix(report, "inline", ["ok", "fail", "stall"])],
    ["", "  command jobs: ok / hang / hog", mix(report, "command", ["ok", "hang", "hog"])],
    ["supervisor", "jobs queued in SQLite", count(report.supervisor.linesIngested)],
    ["", "jobs dispatched over the socket", count(report.supervisor.dispatched)],
    ["process-guard", "done (exit 0)", count(o.ok)],
    ["", "failed (exit 1)", count(o.failed)],
    ["", "timed out (exit 124)", count(o.timedOut)],
    ["", "  in-process jobs aborted at the deadline", count(g.aborts)],
    [
      "",
      "  SIGINT / SIGTERM / SIGKILL sent to children",
      `${g.signals.SIGINT} / ${g.signals.SIGTERM} / ${g.signals.SIGKILL}`,
    ],
    ["", "stopped for memory (exit 125)", count(o.memory)],
    ["checkpoint", "reference stream downtimes", count(r.downtimes)],
    ["", "results paused for", seconds(r.pausedMs)],
    ["", "results reprocessed after recovery", count(r.reprocessed)],
    ["", "results streamed", count(r.consumed)],
  ];
  if (s !== undefined) {
    rows.push(
      ["rmq-storage", "results written via RabbitMQ", count(s.written)],
      ["", "contentAdd calls (failed)", `${count(s.calls)} (${s.failedCalls})`],
      ["", "batches committed by the server", count(s.serverBatches)],
      ["", "results read back from SQLite", count(s.readBack)],
    );
  }
  if (c !== undefined) {
    const agents = Object.entries(c.done)
      .map(([name, n]) => `${name} ${n}`)
      .join(", ");
    const wakes = Object.entries(c.wakes)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(", ");
    rows.push(
      ["polling-catalog", "follow-up rows inserted", count(c.followUps)],
      ["", "claimed and done", agents],
      ["", "claims lost to the other agent (412)", count(c.conflicts)],
      ["", "agent wake-ups", wakes],
    );
  }
  rows.push(
    ["total", "wall time", seconds(report.wallMs)],
    ["", "throughput (slow jobs included)", `${report.jobsPerSecond.toFixed(1)} jobs/s`],
  );
  const header: [string, string, string] = ["stage", "figure", "value"];
  const widths = [0, 1, 2].map((i) => Math.max(...[header, ...rows].map((row) => row[i]!.length)));
  const line = (row: [string, string, string]) =>
    `${row[0].padEnd(widths[0]!)}  ${row[1].padEnd(widths[1]!)}  ${row[2].padStart(widths[2]!)}`;
  const title = `@x demo: ${count(report.jobs)} jobs, ${report.workers} workers`;
  const kept = report.directory === undefined ? [] : [`files kept in ${report.directory}`];
  return [title, "", line(header), ...rows.map(line), ...kept, ""].join("\n");
}

/** Compares what happened with what the plan implies; each mismatch is one line. */
export function checkReport(report: Report): string[] {
  const problems: string[] = [];
  const expect = (what: string, actual: number, expected: number) => {
    if (actual !== expected) problems.push(`${what}: ${actual}, expected ${expected}`);
  };
  const { expected: e, outcomes: o, jobs } = report;
  expect("jobs queued by the supervisor", report.supervisor.linesIngested, jobs);
  expect("jobs dispatched", report.supervisor.dispatched, jobs);
  expect("jobs finished (DONE)", report.supervisor.finished, jobs);
  expect("jobs done (exit 0)", o.ok, e.ok);
  expect("jobs failed (exit 1)", o.failed, e.failed);
  expect("jobs timed out (exit 124)", o.timedOut, e.timedOut);
  expect("jobs stopped for memory (exit 125)", o.memory, e.memory);
  expect("jobs with another exit code", o.other, 0);
  expect("results streamed through the checkpoint", report.results.consumed, jobs);
  if (report.results.downtimes < 1) problems.push("the checkpoint never saw the reference stream go down");
  if (report.results.reprocessed < 1) problems.push("no result was reprocessed after the recovery");
  if (report.storage !== undefined) {
    expect("results written through rmq-storage", report.storage.written, jobs);
    expect("contentAdd calls that failed", report.storage.failedCalls, 0);
    expect("results read back from the store", report.storage.readBack, jobs);
  }
  if (report.catalog !== undefined) {
    const c = report.catalog;
    const done = Object.values(c.done).reduce((a, b) => a + b, 0);
    expect("follow-up rows", c.followUps, jobs - e.ok);
    expect("follow-up rows claimed and done", done, c.followUps);
    expect("follow-up rows claimed twice", c.claimedTwice, 0);
  }
  return problems;
}
