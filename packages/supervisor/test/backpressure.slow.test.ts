import { writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { maxUnansweredCommands } from "../src/worker-server.js";
import { serve } from "./cli-process.js";
import { paths, RawConnection, start } from "./harness.js";
import { procStatusKb } from "./proc-status.js";

/**
 * A client that writes commands as fast as the socket takes them and never reads a reply: it pauses its own
 * reading, so the daemon's replies fill the kernel's buffers, then the daemon's.
 */
function flooder(path: string, chunk: Buffer, stopped: () => boolean): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => {
      socket.pause();
      const write = () => {
        while (!stopped() && socket.write(chunk)) {}
      };
      socket.on("drain", write);
      write();
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

describe("connection limits and backpressure", () => {
  it("500 clients that write and never read grow the daemon boundedly; a worker is served meanwhile", async () => {
    const p = paths();
    writeFileSync(
      join(p.fetchersDir, "f.1.txt"),
      Array.from({ length: 200 }, (_, i) => `pkg${i} 1.${i} 1.${i + 1}\n`).join(""),
    );
    const daemon = serve(p);
    await waitFor(() => daemon.stderr().includes("listening"), 30_000, "the daemon");
    const pid = daemon.child.pid!;
    // an idle worker connection first, so that the baseline includes one connection's fixed costs
    using worker = await RawConnection.open(p.socket);
    expect(await worker.send("READY\n")).toMatch(/^JOB /);
    const before = procStatusKb(pid, "VmHWM");
    let stop = false;
    // READY and DONE lines, 64 KiB per write
    const unit = "READY\nDONE pkg1 0\nREADY\nDONE no.such.path 3 extra\n";
    const chunk = Buffer.from(unit.repeat(Math.floor(65_536 / unit.length)));
    const clients = await Promise.all(
      Array.from({ length: 500 }, () => flooder(p.socket, chunk, () => stop)),
    );
    onTestFinished(() => {
      for (const c of clients) c.destroy();
    });
    // a well-behaved worker gets its replies while the 500 flood
    for (let i = 0; i < 20; i++) {
      const reply = await worker.send("READY\n");
      expect(reply).toMatch(/^(JOB \S+ .*|NOJOBS)\n$/);
      if (reply!.startsWith("JOB "))
        expect(await worker.send(`DONE ${reply!.split(" ")[1]} 0\n`)).toMatch(/\n$/);
    }
    // keep flooding for a while, so that every connection is blocked and buffers are at their worst
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const peak = procStatusKb(pid, "VmHWM");
    stop = true;
    expect(await worker.send("READY\n")).toMatch(/\n$/);
    const growthMb = (peak - before) / 1024;
    console.log(`daemon peak RSS grew by ${growthMb.toFixed(1)} MB with 500 flooding clients`);
    // Bounded, not "a few MB": Node reads a flooding socket 64 KiB at a time, and holds up to one such read
    // per connection (about 64 MB for 500) until it is collected. Without the caps the daemon stalls in one
    // commit of hundreds of thousands of commands and buffers every reply.
    expect(growthMb).toBeLessThan(128);
    expect(daemon.child.exitCode).toBeNull();
  }, 120_000);

  it("answers 64 commands sent before reading; one more unanswered ends the connection after them", async () => {
    const p = paths();
    writeFileSync(join(p.fetchersDir, "f.1.txt"), "a 1\nb 2\n");
    const { sup, recorder } = await start(p);
    using conn = await RawConnection.open(p.socket);
    for (let round = 0; round < 3; round++) {
      conn.write("READY\n".repeat(maxUnansweredCommands));
      const replies: Array<string | null> = [];
      for (let i = 0; i < maxUnansweredCommands; i++) replies.push(await conn.next());
      if (round === 0) expect(replies.slice(0, 2)).toEqual(["JOB a 1\n", "JOB b 2\n"]);
      expect(replies.slice(round === 0 ? 2 : 0).every((r) => r === "NOJOBS\n")).toBe(true);
    }
    expect(sup.stats().commandsRejected).toBe(0);
    using greedy = await RawConnection.open(p.socket);
    greedy.write("READY\n".repeat(maxUnansweredCommands + 1));
    for (let i = 0; i < maxUnansweredCommands; i++) expect(await greedy.next()).toBe("NOJOBS\n");
    expect(await greedy.next()).toBeNull();
    expect(sup.stats().commandsRejected).toBe(1);
    expect(recorder.records.at(-1)?.fields).toMatchObject({ reason: "too-many-commands" });
    // 64 KiB of unanswered commands at most, too
    using long = await RawConnection.open(p.socket);
    const done = `DONE ${"x".repeat(30_000)} 0\n`;
    long.write(done.repeat(3));
    expect(await long.next()).toBe("NOJOBS\n");
    expect(await long.next()).toBe("NOJOBS\n");
    expect(await long.next()).toBeNull();
    expect(sup.stats().commandsRejected).toBe(2);
  });

  it("refuses connections beyond maxConnections with a log line, a counter and an event", async () => {
    const p = paths();
    const { startSupervisor } = await import("../src/index.js");
    const { recordingLogger } = await import("@x/test-support/recording-logger");
    const recorder = recordingLogger();
    const sup = await startSupervisor({
      db: p.db,
      fetchersDir: p.fetchersDir,
      socket: p.socket,
      maxConnections: 2,
      logger: recorder.logger,
    });
    onTestFinished(() => sup.close());
    const rejects: unknown[] = [];
    sup.on("reject", (e) => rejects.push(e));
    using first = await RawConnection.open(p.socket);
    using second = await RawConnection.open(p.socket);
    expect(await first.send("READY\n")).toBe("NOJOBS\n");
    expect(await second.send("READY\n")).toBe("NOJOBS\n");
    using third = await RawConnection.open(p.socket);
    third.write("READY\n");
    expect(await third.next()).toBeNull();
    expect(sup.stats().connectionsRejected).toBe(1);
    expect(rejects).toEqual([
      expect.objectContaining({ kind: "connection", reason: "too-many-connections" }),
    ]);
    expect(recorder.records.filter((r) => r.msg === "connection refused: too many connections")).toHaveLength(
      1,
    );
    first.close();
    await waitFor(
      async () => {
        try {
          using again = await RawConnection.open(p.socket);
          return (await again.send("READY\n")) === "NOJOBS\n";
        } catch {
          return false;
        }
      },
      10_000,
      "a free slot",
    );
    expect(await second.send("READY\n")).toBe("NOJOBS\n");
  });
});
