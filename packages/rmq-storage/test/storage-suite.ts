import { XError } from "@x/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EntityType,
  MAX_TIMESTAMP,
  MIN_TIMESTAMP,
  type ProvenanceStorage,
  RelationType,
  type Sha1,
} from "../src/index.js";
import { apply, dump, generateFixture, randomId } from "./fixture.js";

/** What a suite needs: a storage to test, and how to release it (and whatever stands behind it). */
export interface SuiteTarget {
  storage: ProvenanceStorage;
  /** Opens a second, independent storage of the same kind, for order-independence checks. */
  fresh: () => Promise<ProvenanceStorage>;
  cleanup: () => Promise<void>;
}

const bytes = (text: string) => Buffer.from(text);
const badInput = async (promise: Promise<unknown>, message?: RegExp) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(XError.is(error, "ERR_X_RMQ_STORAGE_BAD_INPUT"), String(error)).toBe(true);
  if (message) expect((error as Error).message).toMatch(message);
};

/**
 * The storage test suite: every merge and read rule of the README, on any `ProvenanceStorage` (the two
 * backends directly, and a client writing through RabbitMQ). Ids are random per test, so the target may
 * be shared by every test of the suite.
 */
export function storageSuite(name: string, open: () => Promise<SuiteTarget>): void {
  describe(name, () => {
    let target: SuiteTarget;
    let s: ProvenanceStorage;
    beforeAll(async () => {
      target = await open();
      s = target.storage;
    });
    afterAll(async () => {
      await target?.cleanup();
    });

    it("answers the generated fixture: earliest occurrences, all occurrences, dates, relations", async () => {
      const fixture = generateFixture({ seed: 7 });
      for (const call of fixture.calls) expect(await apply(s, call)).toBe(true);
      for (const content of fixture.contents) {
        expect(await s.contentFindFirst(content)).toEqual(fixture.first.get(content) ?? null);
        expect(await s.contentFindAll(content)).toEqual(fixture.occurrences.get(content));
      }
      expect(await s.contentGet(fixture.contents)).toEqual(new Map([...fixture.contentDates].sort()));
      const ids = new Set([
        ...fixture.contents,
        ...fixture.directories,
        ...fixture.revisions,
        ...fixture.origins,
      ]);
      const all = await s.entityGetAll(EntityType.REVISION);
      expect(fixture.revisions.every((r) => all.has(r))).toBe(true);
      const chain = await s.relationGet(RelationType.REV_BEFORE_REV, fixture.revisions);
      expect(chain.size).toBe(fixture.revisions.length - 1);
      const back = await s.relationGet(RelationType.REV_BEFORE_REV, [fixture.revisions[1] as Sha1], true);
      expect([...back]).toEqual([[fixture.revisions[0], [{ dst: fixture.revisions[1], path: null }]]]);
      // Idempotent: replaying every call in reverse order on a fresh storage gives the same state (no origin conflicts here).
      const other = await target.fresh();
      try {
        for (const call of [...fixture.calls].reverse()) expect(await apply(other, call)).toBe(true);
        for (const call of fixture.calls) expect(await apply(other, call)).toBe(true);
        const only = (id: Sha1) => ids.has(id);
        expect(await dump(other, only)).toEqual(await dump(s, only));
      } finally {
        await other.close();
      }
    });

    it("contentAdd keeps the earliest date and replaces a stored null", async () => {
      const [a, b, rev] = [randomId(), randomId(), randomId()];
      expect(await s.contentAdd(new Map([[a, 50n]]))).toBe(true);
      expect(await s.contentAdd(new Map([[a, 70n]]))).toBe(true);
      expect(await s.contentAdd(new Map([[a, 40n]]))).toBe(true);
      expect(
        await s.relationAdd(RelationType.CNT_EARLY_IN_REV, new Map([[b, [{ dst: rev, path: bytes("x") }]]])),
      ).toBe(true);
      expect(await s.contentGet([a, b, a])).toEqual(new Map([[a, 40n]]));
      expect(await s.contentAdd(new Map([[b, 90n]]))).toBe(true);
      expect((await s.contentGet([b])).get(b)).toBe(90n);
    });

    it("answers contentGet, directoryGet, revisionGet and originGet in ascending id order", async () => {
      // A fresh storage, its rows written one by one in descending id order: PostgreSQL scans a small table
      // in the order its rows were written, SQLite reads the ids in the order they are asked.
      const other = await target.fresh();
      try {
        const ascending = Array.from({ length: 8 }, () => randomId()).sort();
        const asked = [...ascending].reverse();
        for (const id of asked) {
          await other.contentAdd(new Map([[id, 1_000n]]));
          await other.directoryAdd(new Map([[id, { date: 5n, flat: false }]]));
          await other.revisionAdd(new Map([[id, { date: 6n, origin: null }]]));
          await other.originAdd(new Map([[id, `https://example.org/${id}`]]));
        }
        const answers = await Promise.all([
          other.contentGet(asked),
          other.directoryGet(asked),
          other.revisionGet(asked),
          other.originGet(asked),
        ]);
        for (const answer of answers) expect([...answer.keys()]).toEqual(ascending);
      } finally {
        await other.close();
      }
    });

    it("directoryAdd: the earliest non-null date, a null never erases, flat stays true", async () => {
      const [d, e] = [randomId(), randomId()];
      await s.directoryAdd(
        new Map([
          [d, { date: null, flat: true }],
          [e, { date: null, flat: false }],
        ]),
      );
      expect(await s.directoryGet([d, e])).toEqual(new Map());
      await s.directoryAdd(new Map([[d, { date: 30n, flat: false }]]));
      await s.directoryAdd(new Map([[d, { date: null, flat: false }]]));
      await s.directoryAdd(new Map([[d, { date: 20n, flat: false }]]));
      expect(await s.directoryGet([d])).toEqual(new Map([[d, { date: 20n, flat: true }]]));
    });

    it("locationAdd keeps distinct paths; locationGetAll lists them in byte order", async () => {
      const tag = randomId();
      const paths = [
        bytes(`${tag}/b`),
        bytes(`${tag}`),
        bytes(`${tag}/a`),
        bytes(`${tag}/\u00e9`),
        bytes(`${tag}/a`),
      ];
      expect(await s.locationAdd(paths)).toBe(true);
      expect(await s.locationAdd([new Uint8Array(0)])).toBe(true);
      const all = await s.locationGetAll();
      const mine = all
        .filter((p) => Buffer.from(p).toString().startsWith(tag))
        .map((p) => Buffer.from(p).toString("hex"));
      expect(mine).toEqual(
        [bytes(tag), bytes(`${tag}/a`), bytes(`${tag}/b`), bytes(`${tag}/\u00e9`)].map((p) =>
          p.toString("hex"),
        ),
      );
      expect(all.some((p) => p.length === 0)).toBe(true);
      for (let i = 1; i < all.length; i++)
        expect(Buffer.compare(Buffer.from(all[i - 1] as Uint8Array), Buffer.from(all[i] as Uint8Array))).toBe(
          -1,
        );
      expect(all[0]).toBeInstanceOf(Uint8Array);
    });

    it("originAdd: the first URL wins, and a row created by relationAdd gets its URL", async () => {
      const [o, p, rev] = [randomId(), randomId(), randomId()];
      await s.originAdd(new Map([[o, "https://one"]]));
      await s.originAdd(new Map([[o, "https://two"]]));
      await s.relationAdd(RelationType.REV_IN_ORG, new Map([[rev, [{ dst: p, path: null }]]]));
      expect(await s.originGet([o, p])).toEqual(new Map([[o, "https://one"]]));
      expect((await s.entityGetAll(EntityType.ORIGIN)).has(p)).toBe(true);
      await s.originAdd(new Map([[p, "https://three"]]));
      expect(await s.originGet([p])).toEqual(new Map([[p, "https://three"]]));
    });

    it("revisionAdd: bare ids create empty rows; data merges earliest date and last non-null origin", async () => {
      const [r, q, o1, o2] = [randomId(), randomId(), randomId(), randomId()];
      expect(await s.revisionAdd([r, q, r])).toBe(true);
      expect(await s.revisionGet([r, q])).toEqual(new Map());
      const all = await s.entityGetAll(EntityType.REVISION);
      expect(all.has(r) && all.has(q)).toBe(true);
      await s.revisionAdd(new Map([[r, { date: 10n, origin: o1 }]]));
      await s.revisionAdd(new Map([[r, { date: null, origin: null }]]));
      expect(await s.revisionGet([r])).toEqual(new Map([[r, { date: 10n, origin: o1 }]]));
      await s.revisionAdd(new Map([[r, { date: 5n, origin: o2 }]]));
      await s.revisionAdd([r]);
      expect(await s.revisionGet([r])).toEqual(new Map([[r, { date: 5n, origin: o2 }]]));
      await s.revisionAdd(new Map([[q, { date: null, origin: o1 }]]));
      // The origin id is kept although originAdd never recorded it, and no origin row appears.
      expect(await s.revisionGet([q])).toEqual(new Map([[q, { date: null, origin: o1 }]]));
      expect((await s.entityGetAll(EntityType.ORIGIN)).has(o1)).toBe(false);
    });

    it("relationAdd creates every row it refers to, collapses duplicates, and reads sort and key by source", async () => {
      const [c1, c2, d1, d2] = [randomId(), randomId(), randomId(), randomId()].sort();
      const [cs, ds] = [c1 as Sha1, c2 as Sha1];
      const [da, db] = [d1 as Sha1, d2 as Sha1];
      const data = new Map([
        [
          ds,
          [
            { dst: db, path: bytes("b") },
            { dst: da, path: bytes("z") },
            { dst: da, path: bytes("a") },
            { dst: da, path: bytes("a") },
          ],
        ],
        [cs, [{ dst: db, path: bytes("") }]],
      ]);
      expect(await s.relationAdd(RelationType.CNT_IN_DIR, data)).toBe(true);
      expect(await s.relationAdd(RelationType.CNT_IN_DIR, data)).toBe(true);
      const expected = new Map([
        [cs, [{ dst: db, path: bytes("") }]],
        [
          ds,
          [
            { dst: da, path: bytes("a") },
            { dst: da, path: bytes("z") },
            { dst: db, path: bytes("b") },
          ],
        ],
      ]);
      const got = await s.relationGet(RelationType.CNT_IN_DIR, [ds, cs, cs]);
      expect([...got.keys()]).toEqual([cs, ds]);
      expect(plain(got)).toEqual(plain(expected));
      expect(plain(await s.relationGet(RelationType.CNT_IN_DIR, [db], true))).toEqual(
        plain(
          new Map([
            [cs, [{ dst: db, path: bytes("") }]],
            [ds, [{ dst: db, path: bytes("b") }]],
          ]),
        ),
      );
      expect(await s.relationGet(RelationType.CNT_IN_DIR, [])).toEqual(new Map());
      const all = await s.relationGetAll(RelationType.CNT_IN_DIR);
      expect(plain(new Map([...all].filter(([k]) => k === cs || k === ds)))).toEqual(plain(expected));
      expect((await s.entityGetAll(EntityType.CONTENT)).has(cs)).toBe(true);
      expect((await s.entityGetAll(EntityType.DIRECTORY)).has(da)).toBe(true);
      expect(await s.contentGet([cs, ds])).toEqual(new Map());
      expect(await s.directoryGet([da, db])).toEqual(new Map());
      const locations = (await s.locationGetAll()).map((p) => Buffer.from(p).toString());
      expect(locations).toEqual(expect.arrayContaining(["a", "z", "b", ""]));
    });

    it("contentFindFirst and contentFindAll: null and [] without dated occurrences, limit after sort, null URL last", async () => {
      const [c, rev, undated, o1, o2, r2] = [
        randomId(),
        randomId(),
        randomId(),
        randomId(),
        randomId(),
        randomId(),
      ];
      expect(await s.contentFindFirst(c)).toBeNull();
      await s.contentAdd(new Map([[c, 1n]]));
      await s.relationAdd(
        RelationType.CNT_EARLY_IN_REV,
        new Map([[c, [{ dst: undated, path: bytes("u") }]]]),
      );
      expect(await s.contentFindFirst(c)).toBeNull();
      expect(await s.contentFindAll(c)).toEqual([]);
      // Two occurrences in one revision with no URL, one in another revision of the same date with a URL.
      const [ra, rb] = [rev, r2].sort() as [Sha1, Sha1];
      await s.revisionAdd(
        new Map([
          [ra, { date: 100n, origin: o1 }],
          [rb, { date: 100n, origin: o2 }],
        ]),
      );
      await s.originAdd(new Map([[o2, "https://b"]]));
      await s.relationAdd(
        RelationType.CNT_EARLY_IN_REV,
        new Map([
          [
            c,
            [
              { dst: ra, path: bytes("y") },
              { dst: ra, path: bytes("x") },
              { dst: rb, path: bytes("a") },
            ],
          ],
        ]),
      );
      const first = await s.contentFindFirst(c);
      expect(first).toEqual({ content: c, revision: ra, date: 100n, origin: null, path: bytes("x") });
      expect(first?.path).toBeInstanceOf(Uint8Array);
      const all = await s.contentFindAll(c);
      expect(all.map((r) => [r.revision, Buffer.from(r.path).toString()])).toEqual([
        [ra, "x"],
        [ra, "y"],
        [rb, "a"],
      ]);
      expect(await s.contentFindAll(c, 2)).toEqual(all.slice(0, 2));
      expect(await s.contentFindAll(c, 0)).toEqual([]);
      for (const limit of [-1, 1.5, "2", Number.NaN]) await badInput(s.contentFindAll(c, limit as number));
      // With the same revision under two origins' URLs, the URL compares by bytes; null sorts last.
      await s.originAdd(new Map([[o1, "https://a"]]));
      expect((await s.contentFindFirst(c))?.origin).toBe("https://a");
    });

    it("keeps µs timestamps exactly, from year 1 to year 9999", async () => {
      const [a, b, c] = [randomId(), randomId(), randomId()];
      await s.contentAdd(
        new Map([
          [a, MIN_TIMESTAMP],
          [b, MAX_TIMESTAMP],
          [c, -1n],
        ]),
      );
      expect(await s.contentGet([a, b, c])).toEqual(
        new Map([
          [a, MIN_TIMESTAMP],
          [b, MAX_TIMESTAMP],
          [c, -1n],
        ]),
      );
      const r = randomId();
      await s.revisionAdd(new Map([[r, { date: 1_700_000_000_123_457n, origin: null }]]));
      expect((await s.revisionGet([r])).get(r)?.date).toBe(1_700_000_000_123_457n);
    });

    it("rejects bad input naming the method and the value, and stores nothing of the call", async () => {
      const good = randomId();
      const m = (value: unknown) =>
        new Map([
          [good, 1n],
          [randomId(), value],
        ]) as Map<Sha1, bigint>;
      await badInput(s.contentAdd(m(5)), /contentAdd.*5/);
      await badInput(s.contentAdd(m(new Date())));
      await badInput(s.contentAdd(m(MAX_TIMESTAMP + 1n)));
      await badInput(s.contentAdd(m(MIN_TIMESTAMP - 1n)));
      await badInput(
        s.contentAdd(
          new Map([
            [good, 1n],
            [good.toUpperCase(), 1n],
          ]),
        ),
        /contentAdd/,
      );
      await badInput(s.contentAdd([[good, 1n]] as unknown as Map<Sha1, bigint>));
      await badInput(s.directoryAdd(new Map([[good, { date: 1n, flat: 1 as unknown as boolean }]])));
      await badInput(s.originAdd(new Map([[good, null as unknown as string]])));
      await badInput(s.locationAdd(["a" as unknown as Uint8Array]));
      await badInput(s.revisionAdd([good, "abc"]));
      await badInput(s.relationAdd("nope" as RelationType, new Map()));
      await badInput(
        s.relationAdd(RelationType.CNT_IN_DIR, new Map([[good, [{ dst: good, path: null }]]])),
        /path/,
      );
      await badInput(
        s.relationAdd(RelationType.REV_IN_ORG, new Map([[good, [{ dst: good, path: bytes("x") }]]])),
        /path/,
      );
      await badInput(s.relationAdd(RelationType.REV_IN_ORG, new Map([[good, 5 as unknown as []]])));
      await badInput(s.contentGet(["x".repeat(200)]), /^contentGet: .{0,160}$/);
      await badInput(s.contentFindFirst("zz"));
      await badInput(s.entityGetAll("file" as EntityType));
      await badInput(s.relationGet(RelationType.CNT_IN_DIR, [good.slice(1)]));
      expect(await s.contentGet([good])).toEqual(new Map());
      expect((await s.entityGetAll(EntityType.CONTENT)).has(good)).toBe(false);
    });

    it("resolves true at once for empty writes and never mutates its input", async () => {
      expect(await s.contentAdd(new Map())).toBe(true);
      expect(await s.revisionAdd([])).toBe(true);
      expect(await s.relationAdd(RelationType.CNT_IN_DIR, new Map())).toBe(true);
      expect(await s.locationAdd([])).toBe(true);
      const id = randomId();
      const input = new Map([[id, { date: 3n, flat: false }]]);
      await s.directoryAdd(input);
      expect(input).toEqual(new Map([[id, { date: 3n, flat: false }]]));
    });
  });
}

function plain(map: Map<Sha1, Array<{ dst: Sha1; path: Uint8Array | null }>>) {
  return [...map].map(([k, v]) => [
    k,
    v.map((r) => [r.dst, r.path === null ? null : Buffer.from(r.path).toString("hex")]),
  ]);
}

/** The closing rules every storage follows. */
export async function expectClosedBehaviour(storage: ProvenanceStorage & AsyncDisposable): Promise<void> {
  await storage.close();
  await storage.close();
  await storage[Symbol.asyncDispose]();
  const closed = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(XError.is(error, "ERR_X_RMQ_STORAGE_CLOSED"), String(error)).toBe(true);
  };
  await closed(storage.contentAdd(new Map([[randomId(), 1n]])));
  await closed(storage.contentAdd(new Map()));
  await closed(storage.contentGet([randomId()]));
  await closed(storage.locationGetAll());
}
