import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exchange, paths, start } from "./harness.js";

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
});
