import type { RedisStreamRecord } from "./redis-stream.js";

/** A Redis stream id, `"<ms>-<seq>"`. */
export const ID = /^(\d+)-(\d+)$/;
const MAX_SEQ = 18_446_744_073_709_551_615n;

/**
 * The id of the first entry a Redis stream can hold at `time`, `"<ms>-0"`: what to `seek` to for the entries
 * added from that time on (with ids that Redis chose, or that the producer chose from its clock).
 *
 * @param time - a valid date
 */
export function idAt(time: Date): string {
  return `${time.getTime()}-0`;
}

/** The id just before `id`, so that reading after it reads `id` itself. */
export function predecessor(id: string): string {
  const [, ms = "0", seq = "0"] = ID.exec(id) ?? [];
  const time = BigInt(ms);
  const sequence = BigInt(seq);
  if (sequence > 0n) return `${time}-${sequence - 1n}`;
  return time > 0n ? `${time - 1n}-${MAX_SEQ}` : "0-0";
}

/** The records of an `XREAD` reply for one key (RESP2 arrays, or a RESP3 map), `[]` for a timeout. */
export function parseReply(reply: unknown): RedisStreamRecord[] {
  return replyEntries(reply).map(recordOf);
}

/**
 * The entries of an `XREAD` or `XREADGROUP` reply for one key, `[id, fields]` each; `fields` is `null` for an
 * entry that was deleted after the group delivered it (`XREADGROUP` of a member's pending entries).
 */
export function replyEntries(reply: unknown): [unknown, unknown][] {
  if (reply === null || reply === undefined) return [];
  let streams: unknown[];
  if (Array.isArray(reply)) streams = reply.map((stream) => (stream as unknown[])[1]);
  else if (reply instanceof Map) streams = [...reply.values()];
  else streams = Object.values(reply as Record<string, unknown>);
  return streams.flatMap(entriesOf);
}

/** The `[id, fields]` entries of a reply that is a list of them (`XRANGE`, `XAUTOCLAIM`'s second item). */
export function entriesOf(reply: unknown): [unknown, unknown][] {
  return Array.isArray(reply) ? (reply as [unknown, unknown][]) : [];
}

/** The record of an `[id, fields]` entry. */
export function recordOf([id, pairs]: [unknown, unknown]): RedisStreamRecord {
  const text = String(id);
  const fields: Record<string, string> = {};
  const list = Array.isArray(pairs) ? pairs : [];
  for (let index = 0; index + 1 < list.length; index += 2)
    fields[String(list[index])] = String(list[index + 1]);
  return { id: text, time: new Date(Number.parseInt(text, 10)), fields }; // the digits before the "-"
}
