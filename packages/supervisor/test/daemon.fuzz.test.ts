import { createConnection } from "node:net";
import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxUnansweredCommands } from "../src/worker-server.js";
import { exchange, paths, start } from "./harness.js";

/** Writes `chunks` one by one (each after the previous was flushed), half-closes, and collects the replies. */
function exchangeInChunks(socketPath: string, chunks: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath, async () => {
      for (const chunk of chunks) await new Promise<void>((done) => socket.write(chunk, () => done()));
      socket.end();
    });
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(received).toString("utf8")));
  });
}

describe("the daemon under fuzzed connections", () => {
  it("answers, rejects and counts, and keeps serving, whatever a client sends", async () => {
    const p = paths();
    const { sup } = await start(p);
    const lines = fc.array(
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
        fc.constantFrom("READY", "DONE", "DONE a", "DONE a b", "DONE a 1", "READY\r", "\r", "", "JOB x y"),
      ),
      { maxLength: 8 },
    );
    let sent = 0;
    await checkProperty(
      "supervisor: connection bytes",
      fc.asyncProperty(lines, fc.boolean(), async (commands, endWithNewline) => {
        const text = commands.join("\n") + (endWithNewline ? "\n" : "");
        sent++;
        const reply = await exchange(p.socket, Buffer.from(text, "latin1"));
        for (const line of reply.split("\n").filter(Boolean)) expect(line).toBe("NOJOBS");
      }),
      0.2,
    );
    expect(sent).toBeGreaterThan(0);
    expect(await exchange(p.socket, "READY\n")).toBe("NOJOBS\n");
    expect(sup.stats().commandsRejected).toBeGreaterThan(0);
  });

  it("answers every command of a pipeline of up to 64, however it is cut; more is answered up to the cap", async () => {
    const p = paths();
    const { sup } = await start(p);
    const pipeline = fc.record({
      commands: fc.array(fc.constantFrom("READY", "DONE a 0", "DONE b -1 extra", "READY\r"), {
        maxLength: maxUnansweredCommands * 2,
      }),
      cuts: fc.array(fc.nat(), { maxLength: 6 }),
    });
    await checkProperty(
      "supervisor: pipelined commands in chunks",
      fc.asyncProperty(pipeline, async ({ commands, cuts }) => {
        const bytes = Buffer.from(commands.map((c) => `${c}\n`).join(""));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((start, i) => bytes.subarray(start, [...points, bytes.length][i]));
        const rejectedBefore = sup.stats().commandsRejected;
        const replies = (await exchangeInChunks(p.socket, chunks)).split("\n").filter(Boolean);
        expect(replies.every((r) => r === "NOJOBS")).toBe(true);
        if (commands.length <= maxUnansweredCommands) expect(replies).toHaveLength(commands.length);
        else if (replies.length < commands.length) {
          expect(replies.length).toBeGreaterThanOrEqual(maxUnansweredCommands);
          expect(sup.stats().commandsRejected).toBe(rejectedBefore + 1);
        }
      }),
      0.2,
    );
    expect(await exchange(p.socket, "READY\n")).toBe("NOJOBS\n");
  });
});
