import {
  chmodSync,
  copyFileSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  otherUnavailableNote,
  otherUser,
  otherUsersDirectory,
  otherUserUnavailable,
  plantLinkAsOtherUser,
  plantPidLinksAsOtherUser,
} from "@x/test-support/other-user";
import { testTempDir } from "@x/test-support/temp-dir";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { jitterHash, writeQueueHtml } from "../src/index.js";
import { escapeHtml, formatDuration } from "../src/queue-page.js";
import { runCli } from "./cli-process.js";
import { createOriginalDatabase } from "./helpers.js";
import { originalStatements } from "./original-statements.js";

const evil = `<script>alert("x")</script>`;

/**
 * A database created and filled by the original's own SQL: two fetchers, one path in both, a payload with a
 * script tag; `a` ran at 1000 and finished at 1100 with exit code 0 (by the original's dequeue and finish).
 */
function originalDatabase(): { dir: string; db: string } {
  const dir = testTempDir("x-supervisor-queue-html-");
  const db = join(dir, "state.db");
  createOriginalDatabase(db);
  const conn = new Database(db);
  try {
    conn.pragma("foreign_keys = ON");
    const enqueue = conn.prepare(
      `INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter)
       SELECT fetcher_id, ?, ?, ?, ? FROM fetchers WHERE name = ?
       ON CONFLICT DO UPDATE SET payload = excluded.payload`,
    );
    const run = (name: string, started: number, entries: Array<[string, string]>) => {
      conn.prepare("INSERT OR IGNORE INTO fetchers (name) VALUES (?)").run(name);
      conn
        .prepare(
          `INSERT INTO fetcher_runs (fetcher_id, run_started, is_complete)
           VALUES ((SELECT fetcher_id FROM fetchers WHERE name = ?), ?, 1)`,
        )
        .run(name, started);
      for (const [a, p] of entries) enqueue.run(started, a, p, jitterHash(a), name);
    };
    run("pypi", 500, [
      ["a", "1.0 1.1"],
      ["b", `2.0 ${evil}`],
      ["c", "3.0 3.1"],
    ]);
    run("github", 600, [
      ["c", "3.0 3.2"],
      ["d", "4.0 4.1"],
    ]);
    const original = originalStatements(conn);
    // Run everything once (so every entry has a last start), in the original's order.
    let now = 1000;
    for (let job = original.dequeue(now); job; job = original.dequeue(++now))
      original.finish(job.attrPath, now + 50, 0);
    conn.exec("UPDATE queue SET is_dequeued = 0"); // a new fetcher run armed them all again
  } finally {
    conn.close();
  }
  return { dir, db };
}

/** The rows of the page's queue table: [position, attr path, fetcher, payload]. */
function queueRows(html: string): string[][] {
  const table = html.slice(html.indexOf('<table id="queue">'));
  return [
    ...table.matchAll(
      /<tr><td class="n">(\d+)<\/td><td>(.*?)<\/td><td>(.*?)<\/td><td class="p">(.*?)<\/td>/g,
    ),
  ].map((m) => m.slice(1, 5));
}

describe("x-supervisor queue-html", () => {
  it("writes update_queue.py's page from a database of the original's schema: dispatch order, escaped, cycle times", async () => {
    const { dir, db } = originalDatabase();
    const out = join(dir, "queue.html");
    writeFileSync(out, "old page");
    const proc = runCli(["queue-html", db, out]);
    expect(await proc.exited).toBe(0);
    expect(proc.stderr()).toContain("5 entries written");
    const html = readFileSync(out, "utf8");

    // The order is the one in which the original's own dequeue hands the entries out.
    const copy = join(dir, "copy.db");
    copyFileSync(db, copy);
    const conn = new Database(copy);
    const original = originalStatements(conn);
    const order: string[] = [];
    for (let job = original.dequeue(5000); job; job = original.dequeue(5000)) {
      order.push(job.attrPath);
      original.finish(job.attrPath, 5000, 0);
    }
    const fetcherOf = conn
      .prepare("SELECT attr_path AS a, name FROM queue JOIN fetchers USING (fetcher_id) ORDER BY attr_path")
      .all() as Array<{ a: string; name: string }>;
    conn.close();
    const rows = queueRows(html);
    expect(rows.map((r) => r[1])).toEqual(order);
    expect(rows.map((r) => r[0])).toEqual(order.map((_, i) => String(i + 1)));
    for (const [, attr, fetcher] of rows)
      expect(fetcherOf.some((f) => f.a === attr && f.name === fetcher)).toBe(true);
    expect(rows.find((r) => r[1] === "b")![3]).toBe(escapeHtml(`2.0 ${evil}`));
    expect(html).not.toContain("<script");

    // Cycle time per fetcher: now minus the last start of the fetcher's next entry.
    const starts = new Database(db, { readonly: true });
    const next = starts
      .prepare(
        `SELECT name, min(last_started) AS s FROM queue JOIN fetchers USING (fetcher_id) GROUP BY name ORDER BY name`,
      )
      .all() as Array<{ name: string; s: number }>;
    starts.close();
    const now = Number(/data-now="(\d+)"/.exec(html)?.[1] ?? Number.NaN);
    const cycleRows = [
      ...html.matchAll(/<tr><td>(\w+)<\/td><td class="n">(\d+)<\/td><td class="n">([^<]+)<\/td><\/tr>/g),
    ];
    expect(cycleRows.map((m) => m[1])).toEqual(next.map((n) => n.name));
    for (const [i, m] of cycleRows.entries()) {
      // The page was written within a few seconds of `now`; the figure is in days at these ages.
      expect(m[3]).toBe(
        formatDuration((Number.isNaN(now) ? Date.now() / 1000 - next[i]!.s : now - next[i]!.s) * 1000),
      );
    }
  });

  it("writeQueueHtml streams a large queue and replaces the file atomically", () => {
    const dir = testTempDir("x-supervisor-queue-html-");
    const db = join(dir, "state.db");
    createOriginalDatabase(db);
    const conn = new Database(db);
    conn.exec("INSERT INTO fetchers (name) VALUES ('bulk'); INSERT INTO fetcher_runs VALUES (1, 1, 1)");
    const insert = conn.prepare(
      "INSERT INTO queue (fetcher_id, fetcher_run_started, attr_path, payload, order_jitter) VALUES (1, 1, ?, ?, ?)",
    );
    conn.transaction(() => {
      for (let i = 0; i < 5_000; i++) insert.run(`p${i}`, `v${i} & <${i}>`, jitterHash(`p${i}`));
    })();
    conn.close();
    const out = join(dir, "queue.html");
    expect(writeQueueHtml(db, out, 2_000_000_000_000)).toBe(5_000);
    const html = readFileSync(out, "utf8");
    const rows = queueRows(html);
    expect(rows).toHaveLength(5_000);
    expect(rows[4_999]![0]).toBe("5000");
    expect(html).toContain("&amp; &lt;");
    expect(html.trimEnd().endsWith("</html>")).toBe(true);
  });

  it("refuses a database at another schema version and leaves the page as it was", async () => {
    const dir = testTempDir("x-supervisor-queue-html-");
    const db = join(dir, "v1.db");
    createOriginalDatabase(db, 1);
    const out = join(dir, "queue.html");
    writeFileSync(out, "old page");
    const proc = runCli(["queue-html", db, out]);
    expect(await proc.exited).toBe(78);
    expect(proc.stderr()).toMatch(/schema version is 1/);
    expect(readFileSync(out, "utf8")).toBe("old page");
    const usage = runCli(["queue-html", db]);
    expect(await usage.exited).toBe(64);
  });

  it.skipIf(otherUserUnavailable !== undefined)(
    `never writes through the links another user planted in the page's directory${otherUnavailableNote}`,
    async () => {
      const { dir, db } = originalDatabase();
      chmodSync(dir, 0o755);
      const secret = join(dir, "secret");
      writeFileSync(secret, "root only\n", { mode: 0o600 });
      const www = otherUsersDirectory(join(dir, "www"), 0o1777); // a directory the other user can write
      const out = join(www, "queue.html");
      // the page's name, and the temporary names of the next process ids
      plantLinkAsOtherUser(secret, out);
      plantPidLinksAsOtherUser(secret, `${out}.`, ".tmp", 400);
      const proc = runCli(["queue-html", db, out]);
      expect(await proc.exited).toBe(0);
      expect(readFileSync(secret, "utf8")).toBe("root only\n");
      expect(statSync(secret).mode & 0o777).toBe(0o600);
      expect(lstatSync(out).isSymbolicLink()).toBe(false);
      expect(statSync(out).mode & 0o777).toBe(0o644);
      expect(queueRows(readFileSync(out, "utf8"))).toHaveLength(5);
      // every other entry is one of the links the other user planted
      const others = readdirSync(www).filter((name) => name !== "queue.html");
      expect(others).toHaveLength(400);
      for (const name of others) expect(lstatSync(join(www, name)).uid).toBe(otherUser.uid);
    },
  );
});
