import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { type Job, runWorker, SupervisorClient } from "../src/index.js";
import { paths, start } from "./harness.js";

async function daemonWith(lines: string) {
  const p = paths();
  writeFileSync(join(p.fetchersDir, "f.1.txt"), lines);
  return { p, ...(await start(p)) };
}

/**
 * A fake supervisor that answers each received line with `reply(line)` (or nothing for `undefined`); closed
 * when the current test finishes.
 */
async function fakeServer(
  socket: string,
  reply: (line: string, count: number) => string | undefined | "close",
) {
  const received: string[] = [];
  const server: Server = createServer((conn) => {
    let buffer = "";
    conn.setEncoding("utf8");
    conn.on("error", () => {});
    conn.on("data", (text: string) => {
      buffer += text;
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        received.push(line);
        const answer = reply(line, received.length);
        if (answer === "close") conn.destroy();
        else if (answer !== undefined) conn.write(answer);
        nl = buffer.indexOf("\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return received;
}

describe("SupervisorClient", () => {
  it("sends commands in call order without awaiting, and parses JOB payloads verbatim", async () => {
    const { p } = await daemonWith("a  lead 1\nb 2\n");
    const client = await SupervisorClient.connect(p.socket);
    const [first, second, third] = [client.ready(), client.ready(), client.ready()];
    const jobs = [await first, await second, await third];
    expect(jobs.filter(Boolean).sort((x, y) => x!.attrPath.localeCompare(y!.attrPath))).toEqual([
      { attrPath: "a", payload: " lead 1" },
      { attrPath: "b", payload: "2" },
    ]);
    expect(jobs[2]).toBeNull();
    expect(await client.done("a", 0)).toBeNull();
    await client.close();
    await client.close();
  });

  it("rejects a bad DONE before sending, a missing daemon, closed connections and bad replies", async () => {
    const { p } = await daemonWith("a 1\n");
    await using client = await SupervisorClient.connect(p.socket);
    for (const [attr, code] of [
      ["", 0],
      ["a b", 0],
      ["a\n", 0],
      ["a", 1.5],
      ["a", Number.NaN],
    ] as const) {
      await expect(client.done(attr, code)).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_BAD_ARGUMENT" });
    }
    expect(await client.ready()).toEqual({ attrPath: "a", payload: "1" });
    await expect(SupervisorClient.connect(join(p.root, "nobody.sock"))).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_CONNECT",
    });

    const fake = join(p.root, "fake.sock");
    await fakeServer(fake, (line) => (line === "READY" ? "WHAT\n" : "close"));
    const bad = await SupervisorClient.connect(fake);
    await expect(bad.ready()).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_BAD_REPLY" });
    const closing = await SupervisorClient.connect(fake);
    await expect(closing.done("x", 0)).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_CONNECTION_CLOSED" });
    await expect(closing.ready()).rejects.toMatchObject({ code: "ERR_X_SUPERVISOR_CONNECTION_CLOSED" });
  });

  it("close() half-closes and still delivers pending replies", async () => {
    const { p } = await daemonWith("a 1\n");
    const client = await SupervisorClient.connect(p.socket);
    const pending = client.ready();
    await client.close();
    expect(await pending).toEqual({ attrPath: "a", payload: "1" });
  });
});

describe("runWorker", () => {
  it("sends READY first, DONE after each job, READY after NOJOBS; maps failures to exit code 1", async () => {
    const p = paths();
    const received = await fakeServer(p.socket, (_line, n) => {
      if (n === 1) return "JOB a 1\n";
      if (n === 2) return "JOB b 2\n";
      if (n === 3) return "JOB c 3\n";
      return "NOJOBS\n";
    });
    const controller = new AbortController();
    const seen: Job[] = [];
    const done = runWorker({
      socket: p.socket,
      idleDelayMs: 10,
      signal: controller.signal,
      run: async (job) => {
        seen.push(job);
        if (job.attrPath === "b") throw new Error("boom");
        if (job.attrPath === "c") return "nope" as never;
        return 7;
      },
    });
    await waitFor(() => received.length >= 6, 10_000, "worker messages");
    controller.abort();
    await done;
    expect(received.slice(0, 6)).toEqual(["READY", "DONE a 7", "DONE b 1", "DONE c 1", "READY", "READY"]);
    expect(seen.map((j) => j.attrPath)).toEqual(["a", "b", "c"]);
  });

  it("resends the same message on a new connection after a connection error or a reply timeout", async () => {
    const p = paths();
    const received = await fakeServer(p.socket, (_line, n) => {
      if (n === 1) return "JOB a 1\n";
      if (n === 2) return "close"; // DONE lost: the connection drops
      if (n === 3) return undefined; // DONE resent: no reply, times out
      if (n === 4) return "NOJOBS\n";
      return undefined;
    });
    const controller = new AbortController();
    const done = runWorker({
      socket: p.socket,
      idleDelayMs: 60_000,
      reconnectDelayMs: 20,
      replyTimeoutMs: 300,
      signal: controller.signal,
      run: async () => 0,
    });
    await waitFor(() => received.length >= 4, 10_000, "retries");
    controller.abort();
    await done;
    expect(received.slice(0, 4)).toEqual(["READY", "DONE a 0", "DONE a 0", "DONE a 0"]);
  });

  it("keeps retrying while no daemon listens, then works against a real daemon", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\n");
    const controller = new AbortController();
    const ran: string[] = [];
    const done = runWorker({
      socket: p.socket,
      reconnectDelayMs: 50,
      idleDelayMs: 50,
      signal: controller.signal,
      run: async (job) => {
        ran.push(job.attrPath);
        return 3;
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { sup } = await start(p);
    await waitFor(() => sup.stats().finished === 1, 10_000, "the job's DONE");
    controller.abort();
    await done;
    expect(ran).toEqual(["a"]);
    expect(sup.storage.db.prepare("SELECT exit_code FROM log").get()).toEqual({ exit_code: 3 });
  });

  it("on abort, aborts run's signal, waits for it, and reports its exit code with QUIT (no next job); an aborted signal never connects", async () => {
    const p = paths();
    const received = await fakeServer(p.socket, (line) => (line === "READY" ? "JOB a 1\n" : "NOJOBS\n"));
    const controller = new AbortController();
    let settled = false;
    const done = runWorker({
      socket: p.socket,
      signal: controller.signal,
      run: (_job, signal) =>
        new Promise<number>((resolve) =>
          signal.addEventListener("abort", () =>
            setTimeout(() => {
              settled = true;
              resolve(7);
            }, 50),
          ),
        ),
    });
    await waitFor(() => received.length === 1, 10_000, "READY");
    controller.abort();
    await done;
    expect(settled).toBe(true);
    expect(received).toEqual(["READY", "QUIT a 7"]);
    await runWorker({ socket: p.socket, signal: AbortSignal.abort(), run: async () => 0 });
    expect(received).toEqual(["READY", "QUIT a 7"]);
  });

  it("on abort while a DONE waits to be sent again (its link failed), reports it with QUIT", async () => {
    const p = paths();
    const received = await fakeServer(p.socket, (_line, n) => {
      if (n === 1) return "JOB a 1\n";
      if (n === 2) return "close"; // the DONE's connection drops before its reply
      return "NOJOBS\n";
    });
    const recorder = recordingLogger();
    const controller = new AbortController();
    const done = runWorker({
      socket: p.socket,
      reconnectDelayMs: 60_000,
      signal: controller.signal,
      logger: recorder.logger,
      run: async () => 4,
    });
    await waitFor(
      () => recorder.records.some((r) => r.msg.startsWith("supervisor unreachable")),
      10_000,
      "the failed DONE",
    );
    controller.abort();
    await done;
    expect(received).toEqual(["READY", "DONE a 4", "QUIT a 4"]);
  });

  it("on abort, reports nothing for a job whose run rejects: its exit code is not known", async () => {
    const p = paths();
    const received = await fakeServer(p.socket, () => "JOB a 1\n");
    const controller = new AbortController();
    const done = runWorker({
      socket: p.socket,
      signal: controller.signal,
      run: (_job, signal) =>
        new Promise<number>((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason)),
        ),
    });
    await waitFor(() => received.length === 1, 10_000, "READY");
    controller.abort();
    await done;
    expect(received).toEqual(["READY"]);
  });

  it("rejects bad options with ERR_X_SUPERVISOR_INVALID_OPTION", async () => {
    await expect(runWorker({ socket: "", run: async () => 0 })).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
    });
    await expect(runWorker({ socket: "/x", run: "no" as never })).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
    });
    await expect(runWorker({ socket: "/x", run: async () => 0, idleDelayMs: -1 })).rejects.toMatchObject({
      code: "ERR_X_SUPERVISOR_INVALID_OPTION",
      message: expect.stringContaining("idleDelayMs"),
    });
    for (const option of ["idleDelayMs", "reconnectDelayMs", "replyTimeoutMs"]) {
      await expect(runWorker({ socket: "/x", run: async () => 0, [option]: 2 ** 31 })).rejects.toMatchObject({
        code: "ERR_X_SUPERVISOR_INVALID_OPTION",
        message: expect.stringContaining(
          `${option}: 2147483648 (expected a duration in ms from 0 to 2147483647`,
        ),
      });
    }
  });
});
