import type { FetcherCycle, QueueEntry, QueueView } from "./queue-view.js";

const htmlEscapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for HTML content and quoted attribute values: `& < > " '`. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => htmlEscapes[c]!);
}

/** Epoch milliseconds as `2026-11-24 11:30:00Z` (whole seconds); `-` for `null`. */
export function formatTime(ms: number | null): string {
  if (ms === null) return "-";
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** Milliseconds as `3d 4h`, `2h 05m`, `4m 09s` or `7s` (whole seconds, truncated); `-` for `null`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "-";
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor(s / 3_600) % 24, Math.floor(s / 60) % 60];
  const two = (n: number) => String(n).padStart(2, "0");
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${two(m)}m`;
  if (m > 0) return `${m}m ${two(s % 60)}s`;
  return `${s}s`;
}

const style = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;margin-bottom:.5em}th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}td.p{font-family:monospace;white-space:pre-wrap;word-break:break-all}
.bad{color:#b00020;font-weight:600}.muted{color:#777}nav a{margin-right:1em}`;

/** `<table>` with a header row and body rows; `cells` are already HTML. */
function table(id: string, headers: string[], rows: string[][], empty: string): string {
  const head = `<tr>${headers.map((h) => `<th>${h}</th>`).join("")}</tr>`;
  const body =
    rows.length === 0
      ? `<tr><td colspan="${headers.length}" class="muted">${empty}</td></tr>`
      : rows.map((r) => `<tr>${r.join("")}</tr>`).join("\n");
  return `<table id="${id}"><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`;
}

/** Epoch milliseconds as whole unix seconds: the pages' `data-now`, in the database's unit. */
const unixSeconds = (ms: number) => Math.floor(ms / 1000);

const td = (text: string | number) => `<td>${escapeHtml(String(text))}</td>`;
const num = (text: string | number) => `<td class="n">${escapeHtml(String(text))}</td>`;

/** The cycle-time table's rows. */
function cycleRows(cycles: FetcherCycle[]): string[][] {
  return cycles.map((c) => [td(c.fetcher), num(c.waiting), num(formatDuration(c.cycleMs))]);
}

/** A row of the queue table. */
export function queueRow(e: QueueEntry): string {
  return `<tr>${num(e.position)}${td(e.attrPath)}${td(e.fetcher)}<td class="p">${escapeHtml(e.payload)}</td>${td(
    formatTime(e.waitingSince),
  )}${td(e.held ? "in flight" : formatTime(e.lastStarted))}</tr>`;
}

/** The queue table's header (before the rows) and footer. */
export const queueTableHead =
  '<table id="queue"><thead><tr><th>#</th><th>attribute path</th><th>fetcher</th><th>payload</th>' +
  "<th>waiting since</th><th>last started</th></tr></thead><tbody>\n";
export const queueTableFoot = "\n</tbody></table>";

/**
 * The script of the live page: every `refreshMs` it fetches the page again and swaps its `<main>` in, so the
 * page refreshes without losing the scroll position; without JavaScript, the page is complete as served.
 */
function refreshScript(refreshMs: number): string {
  return `(()=>{const tick=async()=>{try{const r=await fetch(location.href,{headers:{accept:"text/html"}});if(r.ok){const d=new DOMParser().parseFromString(await r.text(),"text/html");const m=d.querySelector("main");if(m)document.querySelector("main").replaceWith(m)}}catch{}setTimeout(tick,${refreshMs})};setTimeout(tick,${refreshMs})})();`;
}

/** The HTTP headers of the live page: its Content-Security-Policy allows only its own inline script and style. */
export function pageSecurityHeaders(refreshMs: number): Record<string, string> {
  // node:crypto is loaded here, not imported: it costs milliseconds at the package's import (issue #31).
  const { createHash } = process.getBuiltinModule("node:crypto");
  const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
  return {
    "content-security-policy": `default-src 'none'; script-src ${hash(refreshScript(refreshMs))}; style-src ${hash(style)}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

function document(title: string, body: string, script?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${style}</style></head>
<body>${body}${script === undefined ? "" : `<script>${script}</script>`}</body></html>
`;
}

/**
 * The live page of `serve --http`: the queue's page in dispatch order, the running jobs, the latest finishes,
 * each fetcher's runs and cycle times. Every string from the database is HTML-escaped.
 *
 * @param view - what {@link readQueueView} returned
 * @param refreshMs - how often the page refreshes itself when JavaScript is on
 */
export function renderQueuePage(view: QueueView, refreshMs: number): string {
  const pages = Math.max(1, Math.ceil(view.waiting / view.pageSize));
  const link = (page: number, text: string) => `<a href="?page=${page}">${text}</a>`;
  const nav = [
    view.page > 1 ? link(1, "« first") : "",
    view.page > 1 ? link(view.page - 1, "‹ previous") : "",
    view.page < pages ? link(view.page + 1, "next ›") : "",
    view.page < pages ? link(pages, "last »") : "",
  ].join("");
  const body = `<main data-now="${unixSeconds(view.now)}">
<h1>x-supervisor queue</h1>
<p id="summary">${view.waiting} waiting, ${view.running.length} running, at ${formatTime(view.now)} (<a href="queue.json?page=${view.page}">JSON</a>, <a href="metrics">metrics</a>)</p>
<h2>Cycle time per fetcher</h2>
${table("cycles", ["fetcher", "waiting", "cycle time"], cycleRows(view.cycles), "no fetcher has waiting entries")}
<h2>Running jobs</h2>
${table(
  "running",
  ["attribute path", "worker", "started", "elapsed"],
  view.running.map((j) => [
    td(j.attrPath),
    td(j.holder ?? "unix socket"),
    td(formatTime(j.started)),
    num(formatDuration(j.elapsedMs)),
  ]),
  "no job is running",
)}
<h2>Latest finishes</h2>
${table(
  "finished",
  ["attribute path", "exit code", "finished", "duration"],
  view.finished.map((j) => [
    td(j.attrPath),
    j.exitCode === 0 ? num(0) : `<td class="n bad">${escapeHtml(String(j.exitCode))}</td>`,
    td(formatTime(j.finished)),
    num(formatDuration(j.durationMs)),
  ]),
  "no job has finished",
)}
<h2>Fetcher runs</h2>
${table(
  "runs",
  ["fetcher", "run", "complete", "lines read"],
  view.fetcherRuns.map((r) => [
    td(r.fetcher),
    num(r.runStarted),
    td(r.isComplete ? "yes" : "reading"),
    num(r.linesRead),
  ]),
  "no fetcher run",
)}
<h2>Queue, page ${view.page} of ${pages}</h2>
<nav>${nav}</nav>
${queueTableHead}${view.entries.length === 0 ? '<tr><td colspan="6" class="muted">the queue is empty</td></tr>' : view.entries.map(queueRow).join("\n")}${queueTableFoot}
<nav>${nav}</nav>
</main>`;
  return document("x-supervisor queue", body, refreshScript(refreshMs));
}

/**
 * The static page of `x-supervisor queue-html`, in parts so a large queue is written as it is read: the head
 * (title, time, cycle time per fetcher, the queue table's header), then one {@link queueRow} per entry, then
 * the foot.
 *
 * @param nowMs - the reference time, epoch milliseconds
 */
export function staticPageParts(nowMs: number, waiting: number, cycles: FetcherCycle[]): [string, string] {
  const head = document("nixpkgs-update queue", "").replace(
    "</body></html>\n",
    `<main data-now="${unixSeconds(nowMs)}">
<h1>nixpkgs-update queue</h1>
<p id="summary">${waiting} waiting, at ${formatTime(nowMs)}</p>
<h2>Cycle time per fetcher</h2>
${table("cycles", ["fetcher", "waiting", "cycle time"], cycleRows(cycles), "no fetcher has waiting entries")}
<h2>Queue in dispatch order</h2>
${queueTableHead}`,
  );
  return [head, `${queueTableFoot}\n</main></body></html>\n`];
}
