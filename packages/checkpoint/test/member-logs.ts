// The members of a consumer-group run as child processes, and their logs as the test reads them while they
// run: each log file is read from where the last poll stopped.
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { startScript } from "./child-script.js";
import type { MemberConfig, MemberLogLine } from "./group-member.js";
import type { GroupEvent, Handling } from "./group-run-check.js";

/** A member process, SIGKILLed when the test finishes. */
export type Member = ReturnType<typeof startScript> & { name: string };

/** Starts `runMember(config)` of group-member.ts in a child process. */
export function startMember(config: MemberConfig): Member {
  const script = `
    const { runMember } = await import("./test/group-member.ts");
    await runMember(${JSON.stringify(config)});
  `;
  return { ...startScript(script), name: config.consumer };
}

/** What one member logged so far. */
export interface MemberState {
  /** The event time of the last price it heartbeat, in ms. */
  lastPrice: number | undefined;
  /** Whether its stream said it was paused at its last look. */
  paused: boolean;
}

/** The logs of every member in a directory, read as they grow. */
export class MemberLogs {
  readonly #dir: string;
  readonly #read = new Map<string, { offset: number; partial: string }>();
  readonly handlings: Handling[] = [];
  readonly events: GroupEvent[] = [];
  readonly members = new Map<string, MemberState>();
  /** The distinct ids handled, by any member. */
  readonly handled = new Set<string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The log file of `member`. */
  fileOf(member: string): string {
    return join(this.#dir, `${member}.log`);
  }

  /** Reads what every member in `names` appended since the last poll. */
  poll(names: Iterable<string>): this {
    for (const member of names) {
      const read = this.#read.get(member) ?? { offset: 0, partial: "" };
      this.#read.set(member, read);
      const text = read.partial + this.#appended(member, read);
      const lines = text.split("\n");
      read.partial = lines.pop() ?? "";
      for (const line of lines) this.#add(member, JSON.parse(line) as MemberLogLine);
    }
    return this;
  }

  /** The bytes appended to a member's log since `read.offset`, which moves past them. */
  #appended(member: string, read: { offset: number }): string {
    let fd: number;
    try {
      fd = openSync(this.fileOf(member), "r");
    } catch {
      return ""; // not created yet
    }
    try {
      const chunks: Buffer[] = [];
      const chunk = Buffer.alloc(1 << 20);
      for (;;) {
        const size = readSync(fd, chunk, 0, chunk.length, read.offset);
        if (size === 0) break;
        chunks.push(Buffer.from(chunk.subarray(0, size)));
        read.offset += size;
      }
      return Buffer.concat(chunks).toString("utf8");
    } finally {
      closeSync(fd);
    }
  }

  #add(member: string, line: MemberLogLine): void {
    const state = this.members.get(member) ?? { lastPrice: undefined, paused: false };
    this.members.set(member, state);
    switch (line.kind) {
      case "handled":
        this.handlings.push({ member, id: line.id, at: line.at, paused: line.paused });
        this.handled.add(line.id);
        break;
      case "down":
      case "seek":
        this.events.push({ kind: line.kind, member, at: line.at, id: line.id });
        break;
      case "resumed":
        this.events.push({ kind: line.kind, member, at: line.at });
        break;
      case "price":
        state.lastPrice = line.time;
        break;
      case "paused-seen":
      case "running-seen":
        state.paused = line.kind === "paused-seen";
        break;
    }
  }
}
