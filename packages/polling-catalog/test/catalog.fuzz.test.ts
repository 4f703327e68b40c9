import { gzipSync } from "node:zlib";
import { XError } from "@x/core";
import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CatalogResponse, ErrorCode, HTTPError, PollingErmrestCatalog, type Row } from "../src/index.js";
import { isOutageError } from "../src/outage.js";
import { startRawServer } from "./raw-server.js";

/** The bound of the fuzzed catalogs: small, so that large bodies are cheap to send. */
const maxResponseBytes = 4096;
/**
 * Their idle timeout: short, because Node 22's fetch never ends a body its Content-Encoding refutes, and such
 * a call waits for it to reject.
 */
const bodyIdleTimeoutMs = 500;
const codes = new Set<string>(Object.values(ErrorCode));

/**
 * What the README documents a call may reject with: one of the package's errors (an `HTTPError` with the
 * status the server sent), or a network error that `blockingPoll` treats as an outage.
 */
function expectDocumented(error: unknown, status: number): void {
  if (XError.is(error) && codes.has(error.code)) {
    if (error instanceof HTTPError && error.code !== ErrorCode.NOT_MODIFIED)
      expect(error.status).toBe(status);
    return;
  }
  if (isOutageError(error)) return;
  throw error;
}

/** How long one call may take, retries included (at most 5 tries, 1.5 s of waits): longer is a hang. */
const hangMs = 20_000;

/** `promise`, or a rejection naming a hang when it does not settle within {@link hangMs}. */
function withinHangBound<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`a hang: no answer within ${hangMs} ms`)), hangMs);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

/** Resolves with what `call` resolves with, or with the documented error it rejected with. */
async function settle<T>(call: () => Promise<T>, status: number): Promise<T | Error> {
  try {
    return await withinHangBound(call());
  } catch (error) {
    expectDocumented(error, status);
    return error as Error;
  }
}

const bytes = (maxLength: number) => fc.uint8Array({ maxLength }).map((b) => Buffer.from(b));

/** ETag values as broken or hostile servers send them. */
const etagValue = fc.oneof(
  bytes(60),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => Buffer.from(`"${s}"`)),
  fc.string({ unit: "grapheme", maxLength: 20 }).map((s) => Buffer.from(`W/"${s}"`)),
  fc
    .uint8Array({ minLength: 1, maxLength: 40 })
    .map((b) => Buffer.concat([Buffer.from('"'), b, Buffer.from('"')])),
  fc.integer({ min: 1_000, max: 40_000 }).map((n) => Buffer.from(`"${"e".repeat(n)}"`)),
  fc
    .constantFrom('""', '"', "*", "W/", '"a", "b"', '  "padded"\t', "\u00ff\u0080")
    .map((s) => Buffer.from(s, "latin1")),
);

const header = fc.oneof(
  etagValue.map((value) => ["ETag", value] as const),
  fc
    .constantFrom(
      "application/json",
      "text/plain; charset=utf-16",
      "text/csv",
      "application/json; charset=latin1",
    )
    .map((v) => ["Content-Type", Buffer.from(v)] as const),
  fc
    .constantFrom("gzip", "deflate", "br", "zstd", "identity", "x-junk")
    .map((v) => ["Content-Encoding", Buffer.from(v)] as const),
  fc
    .constantFrom("/ermrest/catalog/1/elsewhere", "http://[bad", "", "//", "javascript:x")
    .map((v) => ["Location", Buffer.from(v)] as const),
  fc
    .constantFrom("chunked", "gzip, chunked", "junk")
    .map((v) => ["Transfer-Encoding", Buffer.from(v)] as const),
  fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), bytes(40)).map(([name, value]) => [name, value] as const),
  fc.tuple(bytes(12), bytes(12)).map(([name, value]) => [name.toString("latin1"), value] as const),
);

/** Bodies: bytes, JSON of any shape, rows of any shape, huge, in wrong encodings, compressed or not. */
const body = fc.oneof(
  bytes(300),
  fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)),
  fc
    .array(fc.oneof(fc.object({ maxDepth: 1 }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 5 })
    .map((rows) => Buffer.from(JSON.stringify(rows))),
  fc
    .integer({ min: maxResponseBytes - 2, max: 3 * maxResponseBytes })
    .map((n) => Buffer.from(`"${"x".repeat(n)}"`)),
  fc.json({ maxDepth: 2 }).map((s) => Buffer.from(s, "utf16le")),
  fc.string({ unit: "binary", maxLength: 50 }).map((s) => Buffer.from(JSON.stringify([{ id: s }]), "latin1")),
  fc.json({ maxDepth: 2 }).map((s) => gzipSync(s)),
  fc.constant(Buffer.from("\ufeff[]")),
);

/** How the body is delimited; the ones that end in a network error (retried, so slow) are rarer. */
const framing = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("length", "chunked", "close", "bad-chunked") },
  { weight: 1, arbitrary: fc.constantFrom("short", "long") },
);

const answerSpec = fc.record({
  status: fc.oneof(
    fc.integer({ min: 100, max: 599 }),
    fc.constantFrom(200, 200, 201, 204, 304, 400, 404, 412, 500),
  ),
  reason: fc.oneof(fc.constant("X"), fc.string({ unit: "binary-ascii", maxLength: 20 })),
  headers: fc.array(header, { maxLength: 4 }),
  body,
  framing,
});

type AnswerSpec = typeof answerSpec extends fc.Arbitrary<infer T> ? T : never;

/** The raw bytes of an answer. */
function serialise(spec: AnswerSpec): Buffer {
  const lines: Buffer[] = [Buffer.from(`HTTP/1.1 ${spec.status} ${spec.reason}\r\n`, "latin1")];
  for (const [name, value] of spec.headers)
    lines.push(Buffer.from(`${name}: `, "latin1"), value, Buffer.from("\r\n"));
  const { body } = spec;
  let payload = body;
  switch (spec.framing) {
    case "length":
      lines.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
      break;
    case "short": // declares more than it sends, then closes: a truncated body
      lines.push(Buffer.from(`Content-Length: ${body.length + 10}\r\n`));
      break;
    case "long":
      lines.push(Buffer.from(`Content-Length: ${Math.max(0, body.length - 3)}\r\n`));
      break;
    case "chunked":
      lines.push(Buffer.from("Transfer-Encoding: chunked\r\n"));
      payload = Buffer.concat([
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body,
        Buffer.from("\r\n0\r\n\r\n"),
      ]);
      break;
    case "bad-chunked":
      lines.push(Buffer.from("Transfer-Encoding: chunked\r\n"));
      payload = Buffer.concat([Buffer.from("zz\r\n"), body]);
      break;
    default: // "close": the body ends with the connection
  }
  lines.push(Buffer.from("Connection: close\r\n\r\n"), payload);
  return Buffer.concat(lines);
}

function catalogOf(server: string): PollingErmrestCatalog {
  return new PollingErmrestCatalog({
    scheme: "http",
    server,
    catalogId: 1,
    maxResponseBytes,
    bodyIdleTimeoutMs,
  });
}

/** The transform of the fuzzed claims: it must only ever see JSON objects. */
function transform(row: Row): Row {
  expect(typeof row === "object" && row !== null && !Array.isArray(row)).toBe(true);
  return { id: row.id ?? null, state: "claimed" };
}

describe("the catalog against hostile HTTP answers", () => {
  it("resolves or rejects as documented (get, stateChangeOnce, a guarded put), whatever the server answers", async () => {
    await checkProperty(
      "polling-catalog: HTTP answers",
      fc.asyncProperty(answerSpec, async (spec) => {
        const answer = serialise(spec);
        await using raw = await startRawServer(() => answer);
        const catalog = catalogOf(raw.server);
        const first = await settle(() => catalog.get("/entity/S:T"), spec.status);
        // A network error again and again (each call retried with backoff) would only slow the run down.
        if (isOutageError(first)) return;
        const response = first instanceof Error ? undefined : first;
        if (response) expect(response.status).toBeLessThan(400);
        await settle(
          () => catalog.stateChangeOnce("/entity/S:T", "/attributegroup/S:T/id;state", transform),
          spec.status,
        );
        await settle(
          () =>
            catalog.stateChangeOnce("/entity/S:T", "/attributegroup/S:T/id,e:=state;state", transform, null, {
              spread: true,
            }),
          spec.status,
        );
        if (response)
          await settle(() => catalog.put("/entity/S:T", { json: [], guardResponse: response }), spec.status);
      }),
      0.2,
    );
  }, 600_000);

  it("sends back an ETag it received byte for byte, as If-None-Match and as If-Match", async () => {
    await checkProperty(
      "polling-catalog: ETag round trip",
      fc.asyncProperty(etagValue, async (etag) => {
        const answer = Buffer.concat([
          Buffer.from("HTTP/1.1 200 OK\r\nETag: "),
          etag,
          Buffer.from(
            "\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]",
          ),
        ]);
        await using raw = await startRawServer(() => answer);
        const catalog = catalogOf(raw.server);
        let response: CatalogResponse;
        try {
          response = await catalog.get("/entity/S:T");
        } catch (error) {
          // An ETag that is not a valid header value (CR, LF, NUL, other controls, over 16 KiB) is refused.
          expect(XError.is(error, ErrorCode.BAD_RESPONSE)).toBe(true);
          return;
        }
        // Node 22's HTTP parser takes a bare CR for the end of a line (later ones refuse the answer, above):
        // what it reads then is another answer, without this ETag.
        if (etag.includes(0x0d)) return;
        const sent = response.etag;
        expect(sent).not.toBeNull();
        const asSent = Buffer.from(sent as string, "latin1");
        expect(asSent.equals(trimOws(etag))).toBe(true);
        await catalog.get("/entity/S:T");
        expect(raw.requests[1]?.header("if-none-match")?.equals(asSent)).toBe(true);
        await catalog.put("/x", { json: [], guardResponse: response });
        expect(raw.requests[2]?.header("if-match")?.equals(asSent)).toBe(true);
        await catalog.stateChangeOnce("/entity/S:T", "/x", () => ({ id: 1 }));
        // With [] nothing is claimed: the call answers the ETag as its idle ETag.
        const idle = await catalog.stateChangeOnce("/entity/S:T", "/x", () => ({ id: 1 }));
        expect(idle.idleEtag).toBe(sent);
      }),
      0.2,
    );
  }, 600_000);
});

/** A header value without the optional whitespace around it, which is not part of the value in HTTP. */
function trimOws(value: Buffer): Buffer {
  let from = 0;
  let to = value.length;
  while (from < to && (value[from] === 0x20 || value[from] === 0x09)) from++;
  while (to > from && (value[to - 1] === 0x20 || value[to - 1] === 0x09)) to--;
  return value.subarray(from, to);
}
