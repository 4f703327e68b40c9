import { XError } from "@x/core";
import { checkProperty, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "./errors.js";
import { MAX_TIMESTAMP, MIN_TIMESTAMP } from "./input.js";
import { writeMethods as methods, splitRanges } from "./routing.js";
import { RelationType } from "./types.js";
import { decodeReply, decodeRequest, encodeMapRequest, encodeRequest, requestSchemas } from "./wire.js";

const sha1 = fc.stringMatching(/^[0-9a-f]{40}$/);
const timestamp = fc.bigInt({ min: MIN_TIMESTAMP, max: MAX_TIMESTAMP });
const hex = "0123456789abcdef";

/** Message bodies as a broken or hostile publisher sends them. */
const hostileBody = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.jsonValue({ maxDepth: 6 }).map((value) => Buffer.from(JSON.stringify(value) ?? "null")),
  fc
    .record({
      v: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 1 })),
      items: fc.array(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), { maxLength: 5 }),
    })
    .map((body) => Buffer.from(JSON.stringify(body))),
  fc
    .tuple(sha1, fc.oneof(fc.string(), fc.constant("1".repeat(400)), fc.constant("-99999999999999999999")))
    .map(([id, date]) => Buffer.from(`{"v":1,"items":[["${id}","${date}"]]}`)),
  fc
    .integer({ min: 1, max: 200_000 })
    .map((depth) => Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth)}`)),
  sha1.map((id) => Buffer.from(`{"v":1,"items":[["${id}","5"]]}`, "utf16le")),
);

describe("rmq-storage wire format under fuzzing", () => {
  it("a request body is decoded or refused with a reason, for any bytes and any queue", async () => {
    await checkProperty(
      "rmq-storage: request message",
      fc.property(
        hostileBody,
        fc.constantFrom(...methods),
        fc.constantFrom(...hex),
        fc.constantFrom(null, ...Object.values(RelationType)),
        (body, method, range, relation) => {
          const decoded = decodeRequest(body, method, method === "relation_add" ? relation : null, range);
          if (!decoded.ok) expect(typeof decoded.reason).toBe("string");
          else expect(decoded.items.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it("decodes a contentAdd body (by hand, for speed) exactly as its schema does, for any item", async () => {
    const nearSha1 = fc.oneof(
      { weight: 6, arbitrary: sha1.map((id) => `0${id.slice(1)}`) }, // of the queue's range
      sha1,
      sha1.map((id) => id.toUpperCase()),
      fc.string(),
      fc.integer(),
      fc.constant(null),
    );
    const nearDate = fc.oneof(
      timestamp.map(String),
      fc.bigInt({ min: MIN_TIMESTAMP - 2n, max: MIN_TIMESTAMP + 1n }).map(String),
      fc.bigInt({ min: MAX_TIMESTAMP - 1n, max: MAX_TIMESTAMP + 2n }).map(String),
      fc.constantFrom("", "-", "1e5", " 5", "0x10", "1".repeat(19), "00000000000000000001"),
      timestamp.map((value) => Number(value)),
    );
    const item = fc.oneof(
      { weight: 5, arbitrary: fc.tuple(nearSha1, nearDate) },
      { weight: 1, arbitrary: fc.array(fc.oneof(sha1, nearDate), { maxLength: 3 }) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
    );
    const body = fc.record({
      v: fc.oneof(
        { weight: 5, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
      ),
      items: fc.array(item, { maxLength: 4 }),
    });
    await checkProperty(
      "rmq-storage: contentAdd fast decoding",
      fc.property(body, (value) => {
        const json = JSON.parse(JSON.stringify(value)) as unknown;
        const decoded = decodeRequest(Buffer.from(JSON.stringify(json)), "content_add", null, "0");
        const schema = requestSchemas.content_add.safeParse(json);
        if (!schema.success) expect(decoded.ok).toBe(false);
        else if (schema.data.items.every(([id]) => (id as string)[0] === "0"))
          expect(decoded).toEqual({ ok: true, items: schema.data.items });
        else expect(decoded.ok).toBe(false);
      }),
    );
  });

  it("a reply body is a reply or null, for any bytes", async () => {
    await checkProperty(
      "rmq-storage: reply message",
      fc.property(hostileBody, (body) => {
        const reply = decodeReply(body);
        if (reply !== null) expect(typeof reply.ok).toBe("boolean");
      }),
    );
  });

  it("every write a client can make crosses the wire unchanged, to the queue of its range", async () => {
    const writes = fc.oneof(
      fc.map(sha1, timestamp, { maxKeys: 20 }).map((data) => ["content_add", data] as const),
      fc
        .map(sha1, fc.record({ date: fc.option(timestamp), flat: fc.boolean() }), { maxKeys: 20 })
        .map((data) => ["directory_add", data] as const),
      fc
        .map(sha1, fc.record({ date: fc.option(timestamp), origin: fc.option(sha1) }), { maxKeys: 20 })
        .map((data) => ["revision_add", data] as const),
      fc
        .map(sha1, fc.string({ unit: "binary" }), { maxKeys: 20 })
        .map((data) => ["origin_add", data] as const),
      fc
        .array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 })
        .map((data) => ["location_add", data] as const),
    );
    await checkProperty(
      "rmq-storage: write round trip",
      fc.property(writes, ([method, data]) => {
        for (const [key, items] of splitRanges(data, method)) {
          const decoded = decodeRequest(encodeRequest(method, items), method, null, key.at(-1)!);
          const normal = (list: readonly unknown[]) =>
            list.map((item) =>
              (Array.isArray(item) ? item : [item]).map((part) =>
                part instanceof Uint8Array ? Buffer.from(part) : part,
              ),
            );
          expect(decoded.ok && normal(decoded.items)).toEqual(normal(items));
        }
      }),
    );
  });

  it("a client's write is routed or refused with ERR_X_RMQ_STORAGE_BAD_INPUT, for any value", async () => {
    const isBadInput = (error: unknown) => XError.is(error, ErrorCode.BAD_INPUT);
    await checkProperty(
      "rmq-storage: client write arguments",
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.map(fc.oneof(sha1, fc.string()), fc.anything(), { maxKeys: 5 }),
          fc.array(fc.oneof(sha1, fc.uint8Array(), fc.anything()), { maxLength: 5 }),
        ),
        fc.constantFrom(...methods),
        fc.constantFrom(...Object.values(RelationType)),
        (data, method, relation) => {
          parsesOrRejects(
            () => splitRanges(data, method, method === "relation_add" ? relation : undefined),
            isBadInput,
          );
        },
      ),
    );
  });
});

describe("encodeMapRequest", () => {
  it("writes a content_add body byte for byte as encodeRequest does, reusing its scratch", () => {
    const scratch = { buffer: Buffer.alloc(0) };
    const near = fc.bigInt({ min: -(2n ** 53n) - 3n, max: 2n ** 53n + 3n });
    // where the digits are written differently: signs, one digit, the 8-digit split, 32 and 53 bits
    const edges = fc.constantFrom(
      0n,
      -1n,
      9n,
      10n,
      99_999_999n,
      10n ** 8n,
      10n ** 8n + 1n,
      2n ** 32n,
      2n ** 53n - 1n,
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(sha1, fc.oneof(timestamp, near, edges)), {
          minLength: 1,
          maxLength: 50,
          selector: ([id]) => id,
        }),
        (entries) => {
          const map = new Map(entries);
          const ids = [...map.keys()];
          expect(
            encodeMapRequest("content_add", ids, map, scratch).equals(encodeRequest("content_add", entries)),
          ).toBe(true);
        },
      ),
    );
  });
});
