import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as connectTls, type TLSSocket } from "node:tls";
import { recordingLogger } from "@x/test-support/recording-logger";
import { waitFor } from "@x/test-support/wait-for";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  type RejectEvent,
  readQueueStatus,
  runWorker,
  SupervisorClient,
  type SupervisorEvents,
  type SupervisorOptions,
  startSupervisor,
  type TlsEndpoint,
} from "../src/index.js";
import {
  type CertificateFiles,
  client2Subject,
  clientSubject,
  makeCa,
  makeCertificate,
  makePki,
  type TestPki,
} from "./certificates.js";
import { runCli } from "./cli-process.js";
import { type DaemonPaths, exchange, paths } from "./harness.js";
import { createOriginalDatabase, describeSchema, readDb } from "./helpers.js";
import { originalStatements } from "./original-statements.js";

let pki: TestPki;
let pkiDir: string;
beforeAll(() => {
  pkiDir = mkdtempSync(join(tmpdir(), "x-supervisor-pki-"));
  pki = makePki(pkiDir);
});
afterAll(() => rmSync(pkiDir, { recursive: true, force: true }));

/** The daemon's TLS listener options for `pki`, on a free loopback port. */
const listenOn = (port = 0): TlsEndpoint => ({
  host: "127.0.0.1",
  port,
  certFile: pki.server.certFile,
  keyFile: pki.server.keyFile,
  caFile: pki.ca.caFile,
});

/** A worker's TLS endpoint for the daemon at `port`, presenting `client` (default worker-1). */
const connectTo = (port: number, client: CertificateFiles = pki.client, caFile = pki.ca.caFile) => ({
  host: "127.0.0.1",
  port,
  certFile: client.certFile,
  keyFile: client.keyFile,
  caFile,
});

/**
 * Starts a daemon with TLS on `p` (jobs from `lines`, `limits` of its handshakes), recording its logs and
 * events; closed after the test.
 */
async function startTls(
  p: DaemonPaths,
  lines?: string,
  port = 0,
  limits: Pick<SupervisorOptions, "maxTlsHandshakes" | "tlsHandshakeTimeoutMs"> = {},
) {
  if (lines !== undefined) writeFileSync(join(p.fetchersDir, "f.1.txt"), lines);
  const recorder = recordingLogger();
  const sup = await startSupervisor({
    db: p.db,
    fetchersDir: p.fetchersDir,
    socket: p.socket,
    tls: listenOn(port),
    ...limits,
    logger: recorder.logger,
  });
  onTestFinished(() => sup.close());
  const events: {
    job: SupervisorEvents["job"][0][];
    done: SupervisorEvents["done"][0][];
    reject: RejectEvent[];
  } = { job: [], done: [], reject: [] };
  sup.on("job", (e) => events.job.push(e));
  sup.on("done", (e) => events.done.push(e));
  sup.on("reject", (e) => events.reject.push(e));
  return { sup, recorder, events, port: sup.tlsAddress()!.port };
}

/** Runs `socat -t5 - <address>` with `input` on stdin, as the original's workers do; resolves with its stdout. */
function socat(address: string, input: string): Promise<{ stdout: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn("socat", ["-t5", "-", address], { stdio: ["pipe", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.on("close", (code) => resolve({ stdout, code }));
    child.stdin.end(input);
  });
}

const openssl = (port: number, files: Partial<CertificateFiles> = {}) =>
  `OPENSSL:127.0.0.1:${port},cafile=${pki.ca.caFile}${
    files.certFile ? `,cert=${files.certFile},key=${files.keyFile}` : ""
  }`;

/** Opens a TLS connection as worker `client`; resolves once the handshake is done. */
function tlsSocket(port: number, client: CertificateFiles = pki.client): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connectTls(
      {
        host: "127.0.0.1",
        port,
        cert: readFileSync(client.certFile),
        key: readFileSync(client.keyFile),
        ca: readFileSync(pki.ca.caFile),
      },
      () => resolve(socket),
    );
    socket.once("error", reject);
    onTestFinished(() => {
      socket.destroy();
    });
  });
}

/** Opens a TCP connection to `port` that sends nothing (a handshake that never starts); closed after the test. */
function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => resolve(socket));
    socket.once("error", reject);
    socket.resume();
    onTestFinished(() => {
      socket.destroy();
    });
  });
}

/** Writes `bytes` on a new TLS connection, half-closes, and returns everything received until it closed. */
async function tlsExchange(port: number, bytes: string | Buffer): Promise<string> {
  const socket = await tlsSocket(port);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.end(bytes);
  });
}

/** Spawns `command` in its own process group, killed (the whole group) when the current test finishes. */
function spawnGroup(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { detached: true, stdio: "ignore" });
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((resolve) => child.once("close", resolve));
      process.kill(-child.pid!, "SIGKILL");
      await closed;
    }
  });
  return child;
}

const finishedLog = (db: string) =>
  Object.fromEntries(
    readDb(
      db,
      (d) =>
        d.prepare("SELECT attr_path, exit_code FROM log WHERE finished IS NOT NULL").all() as Array<{
          attr_path: string;
          exit_code: number;
        }>,
    ).map((r) => [r.attr_path, r.exit_code]),
  );

describe("the TLS listener", () => {
  it("answers only clients with a certificate from its CA; refuses, logs and counts no certificate, another CA, an expired one and plaintext", async () => {
    const p = paths();
    const { sup, recorder, events, port } = await startTls(p, "alpha 1.0 1.1\nbravo 2.0 2.1\n");
    const refused = await Promise.all([
      socat(openssl(port), "READY\n"),
      socat(openssl(port, pki.stranger), "READY\n"),
      socat(openssl(port, pki.expired), "READY\n"),
      socat(`TCP:127.0.0.1:${port}`, "READY\n"),
    ]);
    expect(refused.map((r) => r.stdout)).toEqual(["", "", "", ""]);
    const good = await socat(openssl(port, pki.client), "READY\n");
    expect(good.stdout).toMatch(/^JOB (alpha 1\.0 1\.1|bravo 2\.0 2\.1)\n$/);
    await waitFor(() => sup.stats().connectionsRejected === 4, 10_000, "four refusals");
    expect(sup.stats()).toMatchObject({ dispatched: 1, commandsRejected: 0, connectionsRejected: 4 });
    expect(events.reject.map((e) => e.reason).sort()).toEqual([
      "tls-expired-certificate",
      "tls-no-certificate",
      "tls-plaintext",
      "tls-untrusted-certificate",
    ]);
    for (const e of events.reject) {
      expect(e).toMatchObject({ kind: "connection", peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    }
    expect(events.reject.find((e) => e.reason === "tls-expired-certificate")?.sample).toContain("CN=expired");
    expect(events.reject.find((e) => e.reason === "tls-untrusted-certificate")?.sample).toContain(
      "CN=stranger",
    );
    expect(recorder.messages("warn").filter((m) => m === "TLS connection refused")).toHaveLength(4);
    expect(events.job).toEqual([expect.objectContaining({ holder: clientSubject })]);
    // the Unix socket still works, and knows no holder
    expect(await exchange(p.socket, "READY\n")).toMatch(/^JOB /);
    expect(events.job[1]).not.toHaveProperty("holder");
  });

  it("notices at once a client that hangs up during the handshake, and logs its address", async () => {
    const p = paths();
    const { sup, recorder, events, port } = await startTls(p, undefined, 0, {
      tlsHandshakeTimeoutMs: 60_000,
    });
    const hungUp = await new Promise<string>((resolve, reject) => {
      const client = createConnection({ host: "127.0.0.1", port }, () => {
        const peer = `${client.localAddress}:${client.localPort}`;
        client.end(Buffer.from([0x16, 0x03, 0x01])); // the first bytes of a ClientHello, then FIN
        client.once("close", () => resolve(peer));
      });
      client.on("error", reject);
      client.resume();
    });
    // The handshake timeout is 60 s here: the refusal must come well before it.
    await waitFor(() => events.reject.length === 1, 5_000, "the refusal");
    expect(events.reject[0]).toEqual({
      kind: "connection",
      reason: "tls-handshake",
      sample: "the client hung up during the TLS handshake",
      peer: hungUp,
    });
    expect(recorder.messages("warn")).toEqual(["TLS connection refused"]);
    expect(sup.stats().connectionsRejected).toBe(1);
  });

  it("closes a connection whose handshake does not finish within tlsHandshakeTimeoutMs", async () => {
    const p = paths();
    const { sup, events, port } = await startTls(p, undefined, 0, { tlsHandshakeTimeoutMs: 400 });
    const started = performance.now();
    const idle = await openIdle(port);
    await new Promise((resolve) => idle.once("close", resolve));
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(350);
    expect(waited).toBeLessThan(5_000);
    await waitFor(() => events.reject.length === 1, 5_000, "the refusal");
    expect(events.reject[0]).toMatchObject({
      kind: "connection",
      reason: "tls-handshake",
      sample: expect.stringContaining("ERR_TLS_HANDSHAKE_TIMEOUT"),
    });
    expect(sup.stats().connectionsRejected).toBe(1);
  });

  it("closes connections beyond maxTlsHandshakes as they are accepted, and takes new ones once a handshake ends", async () => {
    const p = paths();
    const { sup, recorder, events, port } = await startTls(p, "a 1\n", 0, {
      maxTlsHandshakes: 2,
      tlsHandshakeTimeoutMs: 60_000,
    });
    const idle = [await openIdle(port), await openIdle(port)];
    await waitFor(
      async () => (await sup.metrics()).includes("x_supervisor_tls_handshakes 2"),
      5_000,
      "two handshakes",
    );
    // A third connection, even a worker with a good certificate, is closed at once without a handshake.
    await expect(SupervisorClient.connect(connectTo(port))).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_CONNECT",
    });
    expect(events.reject).toEqual([
      {
        kind: "connection",
        reason: "too-many-tls-handshakes",
        sample: "2 TLS handshakes in progress, the limit (maxTlsHandshakes)",
        peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      },
    ]);
    expect(recorder.records.filter((r) => r.level === "warn").map((r) => [r.msg, r.fields.reason])).toEqual([
      ["TLS connection refused", "too-many-tls-handshakes"],
    ]);
    // Once one of them hangs up, a worker gets its place; connections past their handshake do not count.
    idle[0]!.destroy();
    const worker = await waitFor(
      () => SupervisorClient.connect(connectTo(port)).catch(() => undefined),
      10_000,
      "a free handshake",
    );
    // Its reply comes after the daemon's end of the handshake (a TLS 1.3 client finishes first).
    expect(await worker.ready()).toMatchObject({ attrPath: "a" });
    const again = await openIdle(port);
    await waitFor(
      async () => (await sup.metrics()).includes("x_supervisor_tls_handshakes 2"),
      5_000,
      "two handshakes",
    );
    expect(again.closed).toBe(false);
    await worker.close();
    expect(events.reject.filter((e) => e.reason === "too-many-tls-handshakes")).toHaveLength(1);
  });

  it("speaks TLS 1.2 and 1.3, and refuses older versions", async () => {
    const p = paths();
    const { sup, events, port } = await startTls(p, "a 1\nb 2\n");
    const tls12 = await new Promise<string>((resolve, reject) => {
      const socket = connectTls({
        host: "127.0.0.1",
        port,
        cert: readFileSync(pki.client.certFile),
        key: readFileSync(pki.client.keyFile),
        ca: readFileSync(pki.ca.caFile),
        maxVersion: "TLSv1.2",
      });
      let text = "";
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
      });
      socket.on("secureConnect", () => {
        expect(socket.getProtocol()).toBe("TLSv1.2");
        socket.end("READY\n");
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text));
    });
    expect(tls12).toMatch(/^JOB [ab] [12]\n$/);
    // openssl s_client can still speak TLS 1.1 when its security level allows it
    const old = spawn(
      "openssl",
      [
        "s_client",
        "-connect",
        `127.0.0.1:${port}`,
        "-tls1_1",
        "-cipher",
        "DEFAULT@SECLEVEL=0",
        "-cert",
        pki.client.certFile,
        "-key",
        pki.client.keyFile,
        "-CAfile",
        pki.ca.caFile,
      ],
      { stdio: ["pipe", "pipe", "ignore"] },
    );
    let out = "";
    old.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    old.stdin.end("READY\n");
    await new Promise((resolve) => old.once("close", resolve));
    expect(out).not.toMatch(/JOB|NOJOBS/);
    await waitFor(() => sup.stats().connectionsRejected === 1, 10_000, "the refusal");
    expect(events.reject).toEqual([expect.objectContaining({ kind: "connection", reason: "tls-handshake" })]);
  });

  it("keeps the protocol and its limits: several commands, CRLF, a last command without \\n, 64 KiB", async () => {
    const p = paths();
    const { sup, port } = await startTls(p, "a 1\nb 2\nc 3\n");
    const reply = await tlsExchange(port, "READY\r\nREADY\nDONE x 0");
    expect(reply.split("\n")).toHaveLength(4);
    expect(reply).toMatch(/^JOB \S+ \d\nJOB \S+ \d\nJOB \S+ \d\n$/);
    expect(await tlsExchange(port, "READY\n")).toBe("NOJOBS\n");
    const exact = `DONE ${"y".repeat(65_536 - 7)} 0`;
    expect(Buffer.byteLength(exact)).toBe(65_536);
    expect(await tlsExchange(port, `${exact}\n`)).toBe("NOJOBS\n");
    expect(await tlsExchange(port, `READY\n${"z".repeat(65_537)}`)).toBe("NOJOBS\n");
    expect(await tlsExchange(port, "ready\nREADY\n")).toBe("");
    expect(sup.stats().commandsRejected).toBe(2);
  });

  it("shares one queue with the Unix socket: the order, the jitter and the newest payload are the same", async () => {
    const p = paths();
    const lines = Array.from({ length: 6 }, (_, i) => `pkg${i} 1.${i}`).join("\n");
    const { sup } = await startTls(p, lines);
    writeFileSync(join(p.fetchersDir, "f.2.txt"), "pkg0 2.0\n");
    await waitFor(() => sup.storage.getFetcherRuns().length === 2, 10_000, "the second run");
    // the order the storage itself would hand out, read from a copy made before any dispatch
    const expected = sup.storage.db
      .prepare(
        "SELECT attr_path FROM queue GROUP BY attr_path ORDER BY last_started, order_jitter, attr_path",
      )
      .all()
      .map((r) => (r as { attr_path: string }).attr_path);
    const port = sup.tlsAddress()!.port;
    const got: string[] = [];
    for (let i = 0; i < 6; i++) {
      const reply = i % 2 === 0 ? await tlsExchange(port, "READY\n") : await exchange(p.socket, "READY\n");
      got.push(reply);
    }
    expect(got.map((r) => r.split(" ")[1])).toEqual(expected);
    expect(got.find((r) => r.startsWith("JOB pkg0 "))).toBe("JOB pkg0 2.0\n");
    // the 12-hour exclusion: a path in flight is not handed out again over either listener
    expect(await tlsExchange(port, "READY\n")).toBe("NOJOBS\n");
  });

  it("records the certificate that holds each job; a worker that disconnects mid-job leaves it started, and status shows who", async () => {
    const p = paths();
    const { sup, events, port } = await startTls(p, "held 1\nunix 2\n");
    const worker1 = await SupervisorClient.connect(connectTo(port));
    const first = await worker1.ready();
    worker1.destroy(); // gone mid-job
    const second = await exchange(p.socket, "READY\n");
    expect(second).toMatch(/^JOB /);
    const status = readQueueStatus(p.db);
    expect(status.inFlight).toBe(2);
    expect(status.unfinishedJobs).toEqual(
      expect.arrayContaining([
        { attrPath: first!.attrPath, started: expect.any(Number), stale: false, holder: clientSubject },
        { attrPath: second.split(" ")[1], started: expect.any(Number), stale: false, holder: null },
      ]),
    );
    // the job stays started: nobody else gets it, whichever listener asks
    expect(await tlsExchange(port, "READY\n")).toBe("NOJOBS\n");
    // another worker may report it; its DONE is logged with its own subject
    const worker2 = await SupervisorClient.connect(connectTo(port, pki.client2));
    expect(await worker2.done(first!.attrPath, 0)).toBeNull();
    await worker2.close();
    expect(events.done).toEqual([
      expect.objectContaining({ attrPath: first!.attrPath, holder: client2Subject }),
    ]);
    expect(readQueueStatus(p.db).unfinishedJobs.map((j) => j.attrPath)).toEqual([second.split(" ")[1]]);
    // a later dispatch of the path on the Unix socket (here an hour after the TLS one) has no holder
    sup.storage.db.exec("UPDATE x_supervisor_job_holders SET started = started - 3600");
    writeFileSync(join(p.fetchersDir, "f.2.txt"), `${first!.attrPath} 3\n`);
    await waitFor(() => sup.storage.getFetcherRuns().length === 2, 10_000, "the second run");
    expect(await exchange(p.socket, "READY\n")).toBe(`JOB ${first!.attrPath} 3\n`);
    expect(readQueueStatus(p.db).unfinishedJobs.find((j) => j.attrPath === first!.attrPath)).toMatchObject({
      holder: null,
    });
    // the original's tools read the database as before: one more table, nothing else changed
    const tables = readDb(p.db, (db) =>
      db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .all()
        .map((r) => (r as { name: string }).name),
    );
    expect(tables).toEqual([
      "fetcher_runs",
      "fetchers",
      "log",
      "queue",
      "sqlite_sequence",
      "x_supervisor_job_holders",
    ]);
    expect(readDb(p.db, (db) => db.pragma("user_version", { simple: true }))).toBe(2);
  });

  it("keeps a database the original built its own: same schema but one table, and its statements work", async () => {
    const p = paths();
    createOriginalDatabase(p.db, 2);
    const before = readDb(p.db, (db) => describeSchema(db));
    const { sup, port } = await startTls(p, "a 1\nb 2\nc 3\n");
    const first = await tlsExchange(port, "READY\n");
    expect(first).toMatch(/^JOB /);
    await sup.close();
    const db = new Database(p.db);
    try {
      expect(describeSchema(db, ["x_supervisor_job_holders"])).toEqual(before);
      expect(db.pragma("user_version", { simple: true })).toBe(2);
      // the original's own dequeue and finish, on the database as the TLS session left it
      const original = originalStatements(db);
      const now = Math.floor(Date.now() / 1000);
      const handedOut = [original.dequeue(now), original.dequeue(now), original.dequeue(now)];
      expect(
        handedOut
          .filter(Boolean)
          .map((j) => j!.attrPath)
          .sort(),
      ).toEqual(["a", "b", "c"].filter((attr) => attr !== first.split(" ")[1]));
      expect(handedOut[2]).toBeUndefined();
      original.finish(first.split(" ")[1]!, now, 0);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  });

  it("adds no table to a database served without TLS; status reads such a database", async () => {
    const p = paths();
    const sup = await startSupervisor({ db: p.db, fetchersDir: p.fetchersDir, socket: p.socket });
    onTestFinished(() => sup.close());
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\n");
    await waitFor(() => sup.storage.getFetcherRuns().length === 1, 10_000, "the run");
    expect(await exchange(p.socket, "READY\n")).toBe("JOB a 1\n");
    expect(sup.tlsAddress()).toBeUndefined();
    await expect(sup.reloadTls()).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_INVALID_OPTION" });
    expect(readQueueStatus(p.db).unfinishedJobs).toEqual([
      { attrPath: "a", started: expect.any(Number), stale: false, holder: null },
    ]);
    expect(
      sup.storage.db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'x_supervisor_job_holders'").get(),
    ).toBeUndefined();
  });

  it("refuses unreadable or mismatched TLS files before creating anything, and a port in use", async () => {
    const p = paths();
    const options = { db: p.db, fetchersDir: join(p.root, "not-yet"), socket: p.socket };
    await expect(
      startSupervisor({ ...options, tls: { ...listenOn(), certFile: join(p.root, "missing.pem") } }),
    ).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_TLS",
      message: expect.stringContaining("missing.pem"),
    });
    await expect(
      startSupervisor({ ...options, tls: { ...listenOn(), keyFile: pki.client.keyFile } }),
    ).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_TLS" });
    expect(existsSync(p.db)).toBe(false);
    expect(existsSync(options.fetchersDir)).toBe(false);
    await expect(startSupervisor({ ...options, tls: { ...listenOn(), port: 70_000 } })).rejects.toMatchObject(
      {
        code: "ERR_X_SUPERVISOR_INVALID_OPTION",
        message: expect.stringContaining("tls.port"),
      },
    );
    const { port } = await startTls(paths());
    await expect(startSupervisor({ ...options, tls: listenOn(port) })).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_TLS",
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
    expect(existsSync(p.socket)).toBe(false);
  });
});

describe("the original's worker script", () => {
  function jobScript(dir: string): string {
    const path = join(dir, "job.sh");
    writeFileSync(path, `#!/bin/sh\necho "$1" >> "${dir}/out"\ncase "$1" in fail*) exit 3 ;; esac\n`);
    chmodSync(path, 0o755);
    return path;
  }
  const original = new URL("./fixtures/original-worker.sh", import.meta.url);

  it.each(["unix", "tls"] as const)(
    "drains a queue over %s, the TLS copy changed only in its socat address",
    async (transport) => {
      const p = paths();
      const lines = ["ok1 1.0 1.1", "ok2 2.0 2.1", "fail3 3.0 3.1", "ok4 4.0 4.1", "ok5 5.0 5.1"];
      const { events, port } = await startTls(p, `${lines.join("\n")}\n`);
      let script = readFileSync(original, "utf8");
      if (transport === "tls") {
        const unix = 'UNIX-CONNECT:"$socket"';
        expect(script.split(unix)).toHaveLength(2);
        script = script.replace(unix, openssl(port, pki.client));
      }
      const path = join(p.root, "worker.sh");
      writeFileSync(path, script);
      chmodSync(path, 0o755);
      spawnGroup(path, [p.socket, jobScript(p.root)]);
      await waitFor(() => Object.keys(finishedLog(p.db)).length === 5, 60_000, "five DONEs");
      expect(finishedLog(p.db)).toEqual({ ok1: 0, ok2: 0, fail3: 3, ok4: 0, ok5: 0 });
      expect(readFileSync(join(p.root, "out"), "utf8").split("\n").filter(Boolean).sort()).toEqual(
        lines.slice().sort(),
      );
      const holders = new Set(events.done.map((e) => e.holder));
      expect(holders).toEqual(new Set([transport === "tls" ? clientSubject : undefined]));
    },
  );
});

describe("runWorker and SupervisorClient over TLS", () => {
  it("connect() refuses a daemon whose certificate its CA did not sign, and unreadable files", async () => {
    const p = paths();
    const { port } = await startTls(p, "a 1\n");
    const dir = join(p.root, "stranger-ca");
    mkdirSync(dir);
    const other = makeCa(dir, "worker-side-ca");
    await expect(SupervisorClient.connect(connectTo(port, pki.client, other.caFile))).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_CONNECT",
    });
    await expect(
      SupervisorClient.connect({ ...connectTo(port), keyFile: join(p.root, "nope.key") }),
    ).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_TLS" });
  });

  it("runs jobs, and reconnects with growing, jittered waits while the daemon restarts", async () => {
    const p = paths();
    const first = await startTls(p, "a 1\n");
    const port = first.port;
    const ran: string[] = [];
    const recorder = recordingLogger();
    const stop = new AbortController();
    const worker = runWorker({
      tls: connectTo(port),
      idleDelayMs: 50,
      reconnectDelayMs: 100,
      signal: stop.signal,
      logger: recorder.logger,
      run: async (job) => {
        ran.push(job.attrPath);
        return 0;
      },
    });
    onTestFinished(async () => {
      stop.abort();
      await worker;
    });
    await waitFor(() => first.events.done.length === 1, 20_000, "the first DONE");
    expect(first.events.done[0]).toMatchObject({ attrPath: "a", holder: clientSubject });
    await first.sup.close();
    const retries = () =>
      recorder.records
        .filter((r) => r.msg.startsWith("supervisor unreachable"))
        .map((r) => Number(/retrying in (\d+) ms/.exec(r.msg)![1]));
    await waitFor(() => retries().length >= 4, 20_000, "four failed reconnects");
    const delays = retries();
    expect(delays.every((ms) => ms >= 50 && ms <= 1_200)).toBe(true);
    expect(Math.max(...delays)).toBeGreaterThan(150); // grown past the first wait
    expect(new Set(delays).size).toBeGreaterThan(1);
    writeFileSync(join(p.fetchersDir, "f.2.txt"), "b 2\n");
    const second = await startTls(p, undefined, port);
    await waitFor(() => second.events.done.some((e) => e.attrPath === "b"), 20_000, "b's DONE");
    expect(ran).toEqual(["a", "b"]);
  });

  it("gives up a connection whose handshake never ends (a link gone dark) after the reply timeout, and tries again", async () => {
    // A peer that accepts and never answers: the TLS handshake hangs, as through a link that drops every byte.
    const accepted: Socket[] = [];
    const tarpit = createServer((socket) => {
      accepted.push(socket);
      socket.on("error", () => {}).resume(); // reads (and drops) the handshake, so it sees the client's close
    });
    await new Promise<void>((resolve) => tarpit.listen(0, "127.0.0.1", resolve));
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of accepted) socket.destroy();
          tarpit.close(() => resolve());
        }),
    );
    const { port } = tarpit.address() as { port: number };
    const stop = new AbortController();
    const recorder = recordingLogger();
    const worker = runWorker({
      tls: connectTo(port),
      replyTimeoutMs: 200,
      reconnectDelayMs: 50,
      signal: stop.signal,
      logger: recorder.logger,
      run: async () => 0,
    });
    onTestFinished(async () => {
      stop.abort();
      await worker;
    });
    await waitFor(() => accepted.length >= 3, 20_000, "three connection attempts");
    expect(recorder.records.some((r) => r.msg.startsWith("supervisor unreachable"))).toBe(true);
    // Each connection given up is closed, not left open.
    await waitFor(
      () => accepted.slice(0, 2).every((socket) => socket.closed),
      20_000,
      "given-up connections closed",
    );
    // A stop while a handshake hangs ends the worker at once.
    await waitFor(
      () => accepted.some((socket) => !socket.closed),
      20_000,
      "a connection attempt in progress",
    );
    stop.abort();
    await worker;
    // connect() gives up when its signal aborts, and does not start with one already aborted.
    const attempts = accepted.length;
    await expect(
      SupervisorClient.connect(connectTo(port), { signal: AbortSignal.timeout(100) }),
    ).rejects.toMatchObject({ name: "TimeoutError" });
    await expect(
      SupervisorClient.connect(connectTo(port), { signal: AbortSignal.abort(new Error("stopped")) }),
    ).rejects.toThrow("stopped");
    await waitFor(() => accepted.every((socket) => socket.closed), 20_000, "every attempt closed");
    expect(accepted.length).toBe(attempts + 1);
  });

  it("rejects giving both socket and tls, or neither", async () => {
    const run = async () => 0;
    await expect(runWorker({ run } as never)).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
    });
    await expect(runWorker({ socket: "/x", tls: connectTo(1), run } as never)).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
    });
    await expect(runWorker({ tls: { ...connectTo(1), port: -1 }, run })).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
    });
  });
});

describe("x-supervisor over TLS", () => {
  /** Starts `x-supervisor serve … --tls 127.0.0.1:0` with `files`, and reads its port from the log. */
  async function serveTls(p: DaemonPaths, files: { cert: string; key: string; ca: string }) {
    const proc = runCli([
      "serve",
      p.db,
      p.fetchersDir,
      p.socket,
      "--tls",
      "127.0.0.1:0",
      "--tls-cert",
      files.cert,
      "--tls-key",
      files.key,
      "--tls-ca",
      files.ca,
    ]);
    onTestFinished(async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exited;
    });
    await waitFor(() => proc.stderr().includes("listening"), 20_000, "the daemon to listen");
    const port = Number(/"port":(\d+)/.exec(proc.stderr())![1]);
    return { proc, port };
  }

  it("worker --connect tls:// runs jobs, its DONEs are recorded, and serve logs the subject with each", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "ok 1\nfail 2\n");
    const { proc, port } = await serveTls(p, {
      cert: pki.server.certFile,
      key: pki.server.keyFile,
      ca: pki.ca.caFile,
    });
    const worker = runCli([
      "worker",
      "--connect",
      `tls://127.0.0.1:${port}`,
      "--tls-cert",
      pki.client.certFile,
      "--tls-key",
      pki.client.keyFile,
      "--tls-ca",
      pki.ca.caFile,
      "--",
      "sh",
      "-c",
      'test "$0" = ok',
    ]);
    onTestFinished(async () => {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await worker.exited;
    });
    await waitFor(() => Object.keys(finishedLog(p.db)).length === 2, 30_000, "two DONEs");
    expect(finishedLog(p.db)).toEqual({ ok: 0, fail: 1 });
    const logged = (event: string) =>
      proc
        .stderr()
        .split("\n")
        .filter((l) => l.includes(event) && l.includes(`holder=${clientSubject}`));
    // The database records a DONE before the daemon's log line for it reaches this process.
    await waitFor(() => logged("job done").length === 2, 10_000, "the daemon's log of both DONEs");
    expect(logged("job dispatched")).toHaveLength(2);
    expect(logged("job done")).toHaveLength(2);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    const status = runCli(["status", p.db]);
    expect(await status.exited).toBe(0);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  it("re-reads the certificates on SIGHUP without dropping open connections", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\nb 2\nc 3\n");
    const live = {
      cert: join(p.root, "server.pem"),
      key: join(p.root, "server.key"),
      ca: join(p.root, "ca.pem"),
    };
    copyFileSync(pki.server.certFile, live.cert);
    copyFileSync(pki.server.keyFile, live.key);
    copyFileSync(pki.ca.caFile, live.ca);
    const { proc, port } = await serveTls(p, live);
    const open = await SupervisorClient.connect(connectTo(port));
    const job = await open.ready();
    expect(job).not.toBeNull();
    // a new CA: its server certificate, and a client certificate it signed
    const newCa = makeCa(p.root, "new-ca");
    const newServer = makeCertificate(p.root, newCa, "new-server", "/CN=supervisor", { server: true });
    const newClient = makeCertificate(p.root, newCa, "new-client", "/O=x-test/CN=worker-9");
    copyFileSync(newServer.certFile, live.cert);
    copyFileSync(newServer.keyFile, live.key);
    copyFileSync(newCa.caFile, live.ca);
    proc.child.kill("SIGHUP");
    await waitFor(() => proc.stderr().includes("TLS files reloaded"), 10_000, "the reload");
    // the connection opened before goes on
    const next = await open.done(job!.attrPath, 0);
    expect(next).not.toBeNull();
    await open.close();
    // new connections: the old CA's client certificates are refused, the new CA's accepted
    const oldClient = `OPENSSL:127.0.0.1:${port},cafile=${newCa.caFile},cert=${pki.client.certFile},key=${pki.client.keyFile}`;
    expect((await socat(oldClient, "READY\n")).stdout).toBe("");
    await waitFor(() => proc.stderr().includes("reason=tls-untrusted-certificate"), 10_000, "the refusal");
    // and the daemon presents its new certificate: a worker that trusts only the old CA refuses it
    await expect(SupervisorClient.connect(connectTo(port))).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_CONNECT",
    });
    const renewed = await SupervisorClient.connect(connectTo(port, newClient, newCa.caFile));
    expect(await renewed.done(next!.attrPath, 0)).not.toBeNull();
    await renewed.close();
    await waitFor(() => proc.stderr().includes("holder=O=x-test, CN=worker-9"), 10_000, "the new subject");
    // a broken file on SIGHUP: logged, and the files in use stay in use
    writeFileSync(live.key, "not a key");
    proc.child.kill("SIGHUP");
    await waitFor(() => proc.stderr().includes("TLS reload failed"), 10_000, "the failed reload");
    const still = await SupervisorClient.connect(connectTo(port, newClient, newCa.caFile));
    expect(await still.ready()).toBeNull();
    await still.close();
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  it("exits 64 on incomplete TLS flags, 78 on unreadable TLS files (creating nothing)", async () => {
    const p = paths();
    const serve = (...extra: string[]) => runCli(["serve", p.db, p.fetchersDir, p.socket, ...extra]);
    const files = ["--tls-cert", pki.server.certFile, "--tls-key", pki.server.keyFile];
    const noCa = serve("--tls", "127.0.0.1:0", ...files);
    const noTls = serve(...files);
    const badAddress = serve("--tls", "127.0.0.1", ...files, "--tls-ca", pki.ca.caFile);
    const unreadable = serve("--tls", "127.0.0.1:0", ...files, "--tls-ca", join(p.root, "missing.pem"));
    const worker = (...args: string[]) => runCli(["worker", ...args, "--", "true"]);
    const clientFiles = ["--tls-cert", pki.client.certFile, "--tls-key", pki.client.keyFile];
    const notTls = worker("--connect", "http://127.0.0.1:1", ...clientFiles, "--tls-ca", pki.ca.caFile);
    const both = worker(
      p.socket,
      "--connect",
      "tls://127.0.0.1:1",
      ...clientFiles,
      "--tls-ca",
      pki.ca.caFile,
    );
    const workerNoCa = worker("--connect", "tls://127.0.0.1:1", ...clientFiles);
    const workerUnreadable = worker(
      "--connect",
      "tls://127.0.0.1:1",
      ...clientFiles,
      "--tls-ca",
      join(p.root, "missing.pem"),
    );
    expect(
      await Promise.all(
        [noCa, noTls, badAddress, unreadable, notTls, both, workerNoCa, workerUnreadable].map(
          (c) => c.exited,
        ),
      ),
    ).toEqual([64, 64, 64, 78, 64, 64, 64, 78]);
    expect(noCa.stderr()).toContain("--tls needs --tls-ca");
    expect(unreadable.stderr()).toContain("missing.pem");
    expect(workerUnreadable.stderr()).toContain("missing.pem");
    expect(existsSync(p.db)).toBe(false);
  });
});
