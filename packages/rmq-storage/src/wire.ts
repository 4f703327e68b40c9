import { v } from "@x/core/internal";
import { pathId } from "./bytes.js";
import { MAX_TIMESTAMP, MIN_TIMESTAMP, relationHasPath } from "./input.js";
import type { Item } from "./routing.js";
import type { DirectoryData, Path, RelationType, RevisionData, Sha1, WriteMethod } from "./types.js";

/*
 * Wire format, version 1: a request body is `{"v":1,"items":[…]}`, each item an array with dates as decimal
 * strings of µs and paths as standard base64; a reply body is `{"v":1,"ok":…,"messageIds":[…]}`.
 */

/** Items per message, at most. */
export const MAX_ITEMS = 100_000;

const b64 = (path: Path) => Buffer.from(path.buffer, path.byteOffset, path.byteLength).toString("base64");
const str = (date: bigint | null) => (date === null ? "null" : `"${date}"`);

/** Encodes one item of {@link splitRanges} as wire JSON (ids are validated hex, so they need no escaping). */
function encodeItem(method: WriteMethod, item: Item): string {
  const id = item[0] as Sha1;
  switch (method) {
    case "content_add":
      return `["${id}","${item[1] as bigint}"]`;
    case "directory_add": {
      const { date, flat } = item[1] as DirectoryData;
      return `["${id}",${str(date)},${flat}]`;
    }
    case "revision_add": {
      const data = item[1] as RevisionData | undefined;
      return `["${id}",${str(data?.date ?? null)},${data?.origin ? `"${data.origin}"` : "null"}]`;
    }
    case "origin_add":
      return `["${id}",${JSON.stringify(item[1])}]`;
    case "location_add":
      return `["${b64(item[0] as Path)}"]`;
    case "relation_add": {
      const path = item[2] as Path | null;
      return `["${id}","${item[1] as Sha1}",${path === null ? "null" : `"${b64(path)}"`}]`;
    }
  }
}

/** The body of one request message. */
export function encodeRequest(method: WriteMethod, items: readonly Item[]): Buffer {
  let json = '{"v":1,"items":[';
  for (let i = 0; i < items.length; i++) json += (i === 0 ? "" : ",") + encodeItem(method, items[i] as Item);
  return Buffer.from(`${json}]}`);
}

/** A reusable buffer for {@link encodeMapRequest}: it grows as needed and is overwritten by the next call. */
export interface Scratch {
  buffer: Buffer;
}

/** Most bytes of a `content_add` item: `["` + 40 + `","` + 20 (a signed 64-bit decimal) + `"]` + `,`. */
const CONTENT_ITEM_BYTES = 68;
const REQUEST_HEAD = '{"v":1,"items":[';

/** Where a bigint's 64 bits are read back as two unsigned 32-bit halves (no allocation, unlike `Number(bigint)`). */
const bits = new DataView(new ArrayBuffer(8));

/** Writes the decimal digits of `n`, an integer in 0 … 2^31 - 1, at `at`; returns the next offset. */
function writeInt(body: Buffer, at: number, n: number): number {
  let digits = 1;
  for (let rest = (n / 10) | 0; rest > 0; rest = (rest / 10) | 0) digits++;
  for (let i = at + digits - 1; i >= at; i--, n = (n / 10) | 0) body[i] = 0x30 + (n % 10);
  return at + digits;
}

/**
 * Writes the decimal digits of `value` at `at`, returns the next offset. Dates from 1970 to 2255 (0 to 2^53 µs)
 * are written from two small integers, without allocating (a string, or the number `Number()` returns, per item
 * was most of what a large call allocated); others through `String()`.
 */
function writeDecimal(body: Buffer, at: number, value: bigint): number {
  if (value < 0n || value > 9_007_199_254_740_991n) return at + body.write(String(value), at, "latin1");
  bits.setBigUint64(0, value);
  const n = bits.getUint32(0) * 4_294_967_296 + bits.getUint32(4);
  const high = Math.floor(n / 1e8);
  let low = n - high * 1e8;
  if (high === 0) return writeInt(body, at, low);
  const end = writeInt(body, at, high) + 8; // then `low`, as 8 digits
  for (let i = end - 1; i >= end - 8; i--, low = (low / 10) | 0) body[i] = 0x30 + (low % 10);
  return end;
}

/**
 * The body of one request message of a `Map` write: the entries of `ids` in `map`. `content_add` (the bulk
 * of a provenance load) is written straight into `scratch` without a string, an array or a buffer per item
 * or message: the result is a view of `scratch.buffer`, valid until the next call with the same scratch
 * (amqplib copies a body into its frames as it publishes). The other methods go through {@link encodeRequest}.
 */
export function encodeMapRequest(
  method: WriteMethod,
  ids: readonly Sha1[],
  map: ReadonlyMap<Sha1, unknown>,
  scratch: Scratch = { buffer: Buffer.alloc(0) },
): Buffer {
  if (method !== "content_add")
    return encodeRequest(
      method,
      ids.map((id) => [id, map.get(id)] as Item),
    );
  const need = REQUEST_HEAD.length + ids.length * CONTENT_ITEM_BYTES + 2;
  if (scratch.buffer.length < need) scratch.buffer = Buffer.allocUnsafeSlow(need);
  const body = scratch.buffer;
  let at = body.write(REQUEST_HEAD, 0, "latin1");
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as Sha1;
    if (i > 0) body[at++] = 0x2c; // ,
    body[at++] = 0x5b; // [
    body[at++] = 0x22; // "
    at += body.write(id, at, "latin1");
    body[at++] = 0x22;
    body[at++] = 0x2c;
    body[at++] = 0x22;
    at = writeDecimal(body, at, map.get(id) as bigint);
    body[at++] = 0x22;
    body[at++] = 0x5d; // ]
  }
  body[at++] = 0x5d;
  body[at++] = 0x7d; // }
  return body.subarray(0, at);
}

const sha1 = v.string().regex(/^[0-9a-f]{40}$/);
const date = v
  .string()
  .regex(/^-?\d{1,18}$/)
  .transform((text) => BigInt(text))
  .refine((value) => value >= MIN_TIMESTAMP && value <= MAX_TIMESTAMP);
const path = v
  .string()
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/)
  .transform((text) => Buffer.from(text, "base64"));

const itemSchemas = {
  content_add: v.tuple([sha1, date]),
  directory_add: v
    .tuple([sha1, date.nullable(), v.boolean()])
    .transform(([id, d, flat]) => [id, { date: d, flat }] as const),
  revision_add: v
    .tuple([sha1, date.nullable(), sha1.nullable()])
    .transform(([id, d, origin]) => [id, { date: d, origin }] as const),
  origin_add: v.tuple([sha1, v.string()]),
  location_add: v.tuple([path]),
  relation_add: v.tuple([sha1, sha1, path.nullable()]),
} as const;

/** The request schemas, by method (the `content_add` decoder's hand-written fast path must agree with its schema). */
export const requestSchemas = Object.fromEntries(
  Object.entries(itemSchemas).map(([method, item]) => [
    method,
    v.object({
      v: v.literal(1),
      items: v
        .array(item as v.Schema<unknown>)
        .min(1)
        .max(MAX_ITEMS),
    }),
  ]),
) as unknown as Record<WriteMethod, v.Schema<{ v: 1; items: Item[] }>>;

const SHA1 = /^[0-9a-f]{40}$/;
const DATE = /^-?\d{1,18}$/;

/**
 * The items of a valid `content_add` body, checked by hand: the same rules as its schema, at a third of the
 * cost (the server decodes every item it writes). `null` for anything else, which the schema then explains.
 */
function contentItems(json: unknown): Item[] | null {
  if (typeof json !== "object" || json === null || (json as { v?: unknown }).v !== 1) return null;
  const list = (json as { items?: unknown }).items;
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_ITEMS) return null;
  const items: Item[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (!Array.isArray(item) || item.length !== 2) return null;
    const [id, text] = item as [unknown, unknown];
    if (typeof id !== "string" || typeof text !== "string" || !SHA1.test(id) || !DATE.test(text)) return null;
    const value = BigInt(text);
    if (value < MIN_TIMESTAMP || value > MAX_TIMESTAMP) return null;
    items[i] = [id, value];
  }
  return items;
}

/** A decoded request: the items in the shape the resolve functions take, or why it is invalid. */
export type DecodedRequest = { ok: true; items: Item[] } | { ok: false; reason: string };

/**
 * Decodes and validates a request body for the queue of (`method`, `relation`, `range`): the JSON shape,
 * every item's schema and path rule, and every item's routing (first hex digit of the id, or of the path's
 * SHA-1 for locations) against the queue's range.
 */
export function decodeRequest(
  body: Buffer,
  method: WriteMethod,
  relation: RelationType | null,
  range: string,
): DecodedRequest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return { ok: false, reason: "body is not JSON" };
  }
  const fast = method === "content_add" ? contentItems(json) : null;
  const parsed =
    fast !== null
      ? { success: true as const, data: { items: fast } }
      : requestSchemas[method].safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `invalid request at ${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
    };
  }
  const items = parsed.data.items;
  const needsPath = relation !== null && relationHasPath(relation);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    if (method === "relation_add" && (item[2] === null) === needsPath)
      return { ok: false, reason: `item ${i} breaks the path rule of ${relation}` };
    const id = method === "location_add" ? pathId(item[0] as Path) : (item[0] as string);
    if (id[0] !== range) return { ok: false, reason: `item ${i} belongs to range ${id[0]}, not ${range}` };
  }
  return { ok: true, items };
}

/** A reply body. */
export function encodeReply(ok: boolean, messageIds: string[], error?: string): Buffer {
  return Buffer.from(JSON.stringify(ok ? { v: 1, ok, messageIds } : { v: 1, ok, messageIds, error }));
}

const replySchema = v.object({
  v: v.literal(1),
  ok: v.boolean(),
  messageIds: v.array(v.string()),
  error: v.string().optional(),
});

/** A decoded reply, or `null` for anything else. */
export function decodeReply(body: Buffer): v.Output<typeof replySchema> | null {
  try {
    const parsed = replySchema.safeParse(JSON.parse(body.toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
