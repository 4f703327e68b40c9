import { isUtf8 } from "node:buffer";

/** Longest command accepted on the socket, in bytes before its `\n` (64 KiB). */
export const maxCommandBytes = 65_536;

/**
 * A parsed worker command, or why it was rejected. `quit` reports a job as `done` does, and asks for no next
 * job: the worker is leaving.
 */
export type Command =
  | { kind: "ready" }
  | { kind: "done" | "quit"; attrPath: string; exitCode: number }
  | { kind: "reject"; reason: "unknown-command" | "bad-done" };

const space = 0x20;
const codePattern = /^[+-]?[0-9]+$/;
const ready = Buffer.from("READY");
const done = Buffer.from("DONE");
const quit = Buffer.from("QUIT");

/**
 * Parses one command line (the bytes before `\n`; one trailing `\r` is dropped): `READY`, or
 * `DONE <attr> <code>[ <ignored>…]` (or `QUIT` with the same arguments) with single-space separators, a
 * non-empty UTF-8 attr path and a safe integer code.
 *
 * @param line - the command's bytes, without the `\n`
 */
export function parseCommand(line: Buffer): Command {
  const body = line.at(-1) === 0x0d ? line.subarray(0, -1) : line;
  if (body.equals(ready)) return { kind: "ready" };
  const firstSpace = body.indexOf(space);
  const word = firstSpace < 0 ? body : body.subarray(0, firstSpace);
  const kind = word.equals(done) ? "done" : word.equals(quit) ? "quit" : undefined;
  if (kind === undefined) return { kind: "reject", reason: "unknown-command" };
  if (firstSpace < 0) return { kind: "reject", reason: "bad-done" };
  const attrEnd = body.indexOf(space, firstSpace + 1);
  if (attrEnd < 0) return { kind: "reject", reason: "bad-done" };
  const attr = body.subarray(firstSpace + 1, attrEnd);
  const codeEnd = body.indexOf(space, attrEnd + 1);
  const code = body.subarray(attrEnd + 1, codeEnd < 0 ? body.length : codeEnd).toString("latin1");
  const exitCode = Number(code);
  if (attr.length === 0 || !isUtf8(attr) || !codePattern.test(code) || !Number.isSafeInteger(exitCode)) {
    return { kind: "reject", reason: "bad-done" };
  }
  return { kind, attrPath: attr.toString("utf8"), exitCode };
}

/** The reply line for a dequeue result: `JOB <attr> <payload>\n` or `NOJOBS\n`. */
export function formatReply(job: { attrPath: string; payload: string } | null): string {
  return job === null ? "NOJOBS\n" : `JOB ${job.attrPath} ${job.payload}\n`;
}

/**
 * Parses a reply line (without its `\n`): `NOJOBS` gives `null`; `JOB <attr> <payload>` gives the job, the
 * payload verbatim (leading spaces included). Anything else gives `undefined`.
 */
export function parseReply(line: string): { attrPath: string; payload: string } | null | undefined {
  const text = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (text === "NOJOBS") return null;
  if (!text.startsWith("JOB ")) return undefined;
  const attrEnd = text.indexOf(" ", 4);
  if (attrEnd <= 4) return undefined;
  return { attrPath: text.slice(4, attrEnd), payload: text.slice(attrEnd + 1) };
}
