import { XError } from "@x/core";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it } from "vitest";
import { startTestFake } from "../test/helpers.js";
import { startStubServer } from "../test/stub-server.js";
import { type ClaimedEvent, ConcurrentUpdate, HTTPError, PollingErmrestCatalog, type Row } from "./index.js";

const query = "/entity/S:Job/state=new?limit=1";
const update = "/attributegroup/S:Job/RID;state";
const claim = (row: Row) => ({ RID: row.RID, state: "claimed" });

async function setup(count = 3) {
  const rows = Array.from({ length: count }, (_, i) => ({ id: i + 1, state: "new" }));
  const fake = await startTestFake({ "S:Job": { key: ["id"], columns: ["state"], rows } });
  const recorder = recordingLogger();
  const catalog = new PollingErmrestCatalog({
    scheme: "http",
    server: fake.server,
    catalogId: fake.catalogId,
    logger: recorder.logger,
  });
  const puts = () => fake.requests.filter((request) => request.method === "PUT").length;
  return { fake, catalog, recorder, puts };
}

describe("stateChangeOnce", () => {
  it("claims every candidate in ceil(n / limit) claiming calls plus one that finds nothing (deriva-py fix 1)", async () => {
    const { fake, catalog } = await setup(5);
    let idleEtag: string | null = null;
    const results = [];
    for (let call = 0; call < 4; call++) {
      const result = await catalog.stateChangeOnce(
        "/entity/S:Job/state=new?limit=2",
        update,
        claim,
        idleEtag,
      );
      results.push(result);
      idleEtag = result.idleEtag;
    }
    expect(results.map((r) => r.batch.length)).toEqual([2, 2, 1, 0]);
    expect(results.slice(0, 3).every((r) => r.idleEtag === null)).toBe(true);
    expect(results[3]?.idleEtag).toBe(`"B+ddN9/bH60bI+dIiMBBtA==;*/*;4"`);
    expect(fake.rows("S:Job").every((row) => row.state === "claimed")).toBe(true);
  });

  it("returns the batch as [candidate, update] pairs in row order", async () => {
    const { catalog } = await setup(2);
    const { batch } = await catalog.stateChangeOnce("/entity/S:Job/state=new", update, claim);
    expect(batch.map(([candidate]) => candidate.id)).toEqual([1, 2]);
    expect(batch[0]?.[1]).toEqual({ RID: batch[0]?.[0].RID, state: "claimed" });
  });

  it("returns at once with the idle ETag when the catalog has not changed, without calling the transform", async () => {
    const { fake, catalog, recorder } = await setup(0);
    const first = await catalog.stateChangeOnce(query, update, claim, null);
    expect(first.idleEtag).not.toBeNull();
    let calls = 0;
    const second = await catalog.stateChangeOnce(
      query,
      update,
      (row) => {
        calls++;
        return claim(row);
      },
      first.idleEtag,
    );
    expect(second).toEqual({ idleEtag: first.idleEtag, batch: [] });
    expect(calls).toBe(0);
    expect(fake.requests.map((r) => r.status)).toEqual([200, 304]);
    expect(recorder.messages("debug")).toContain("No new state to process.");
  });

  it("uses the cached response on 304 when the idle ETag is stale, and claims rows it finds there", async () => {
    const { fake, catalog } = await setup(1);
    await catalog.get(query);
    const result = await catalog.stateChangeOnce(query, update, claim, '"an older etag"');
    expect(fake.requests[1]?.status).toBe(304);
    expect(result.batch).toHaveLength(1);
  });

  it("drops rows transformed to null or undefined; all dropped means idle, with no PUT", async () => {
    const { catalog, puts } = await setup(3);
    const some = await catalog.stateChangeOnce("/entity/S:Job", update, (row) =>
      row.id === 2 ? claim(row) : row.id === 1 ? null : undefined,
    );
    expect(some.batch.map(([candidate]) => candidate.id)).toEqual([2]);
    expect(some.idleEtag).toBeNull();
    const none = await catalog.stateChangeOnce("/entity/S:Job/state=new", update, () => null);
    expect(none.batch).toEqual([]);
    expect(none.idleEtag).toMatch(/;2"$/);
    expect(puts()).toBe(1);
  });

  it("calls an async transform one row at a time, in order", async () => {
    const { catalog } = await setup(3);
    const seen: unknown[] = [];
    let active = 0;
    await catalog.stateChangeOnce("/entity/S:Job", update, async (row) => {
      active++;
      expect(active).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(row.id);
      active--;
      return claim(row);
    });
    expect(seen).toEqual([1, 2, 3]);
  });

  it("aborts with the transform's error before any PUT (deriva-py fix 8)", async () => {
    const { catalog, puts } = await setup(2);
    const boom = new Error("boom");
    await expect(
      catalog.stateChangeOnce("/entity/S:Job", update, (row) => {
        if (row.id === 2) throw boom;
        return claim(row);
      }),
    ).rejects.toBe(boom);
    await expect(
      catalog.stateChangeOnce("/entity/S:Job", update, async () => Promise.reject(boom)),
    ).rejects.toBe(boom);
    expect(puts()).toBe(0);
  });

  it("rejects with ConcurrentUpdate and writes nothing when the catalog changed after the GET", async () => {
    const { fake, catalog } = await setup(2);
    const other = new PollingErmrestCatalog({ scheme: "http", server: fake.server, catalogId: 1 });
    const error = await catalog
      .stateChangeOnce("/entity/S:Job", update, async (row) => {
        if (row.id === 1) await other.post("/entity/S:Job", { json: [{ id: 99, state: "new" }] });
        return claim(row);
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrentUpdate);
    expect(fake.rows("S:Job").filter((row) => row.state === "claimed")).toEqual([]);
  });

  it("rejects with HTTPError when the update names an unknown column", async () => {
    const { catalog } = await setup(1);
    const error = await catalog
      .stateChangeOnce("/entity/S:Job", "/attributegroup/S:Job/RID;nope", (row) => ({
        RID: row.RID,
        nope: 1,
      }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).status).toBe(409);
  });

  it("logs the server's count, which may be smaller than the plan, and returns the full plan", async () => {
    const { catalog, recorder } = await setup(2);
    const { batch } = await catalog.stateChangeOnce("/entity/S:Job", update, (row) =>
      row.id === 1 ? claim(row) : { RID: "no-such-rid", state: "claimed" },
    );
    expect(batch).toHaveLength(2);
    expect(recorder.messages("info")).toContain("Updated 1 row in catalog.");
  });

  it("emits claimed after the PUT", async () => {
    const { catalog } = await setup(1);
    const events: ClaimedEvent[] = [];
    catalog.on("claimed", (event) => events.push(event));
    const { batch } = await catalog.stateChangeOnce(query, update, claim);
    expect(events).toEqual([{ queryPath: query, updatePath: update, batch }]);
  });

  it("rejects with ERR_X_POLLING_CATALOG_BAD_RESPONSE when the query does not answer a JSON array", async () => {
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json", ETag: '"e"' }).end('{"not":"an array"}');
    });
    const catalog = new PollingErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1 });
    const error = await catalog.stateChangeOnce("/entity/S:Job", update, claim).catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_BAD_RESPONSE")).toBe(true);
  });
});

describe("stateChangeOnce with spread", () => {
  const conditional = "/attributegroup/S:Job/RID,expected:=state;state";
  const claimIfNew = (row: Row) => ({ RID: row.RID, expected: "new", state: "claimed" });

  it("claims claimRows random candidates (default 10) with one unguarded conditional PUT", async () => {
    const { fake, catalog, puts } = await setup(17);
    const { batch } = await catalog.stateChangeOnce(
      "/entity/S:Job/state=new",
      conditional,
      claimIfNew,
      null,
      {
        spread: true,
      },
    );
    expect(batch).toHaveLength(10);
    expect(puts()).toBe(1);
    const claimed = fake.rows("S:Job").filter((row) => row.state === "claimed");
    expect(claimed.map((row) => row.id).sort()).toEqual(batch.map(([row]) => row.id).sort());
    // Only the rows the server applied are the batch: a rival takes 6 of the 7 left between our GET and PUT.
    const left = fake.rows("S:Job").filter((row) => row.state === "new");
    const partial = await catalog.stateChangeOnce(
      "/entity/S:Job/state=new",
      conditional,
      async (row) => {
        if (row.id === left[0]?.id)
          await catalog.put(conditional, {
            json: left.slice(1).map((taken) => ({ RID: taken.RID, expected: "new", state: "rival" })),
          });
        return claimIfNew(row);
      },
      null,
      { spread: true, claimRows: 7 },
    );
    expect(partial.batch.map(([row]) => row.id)).toEqual([left[0]?.id]);
    await expect(
      catalog.stateChangeOnce("/entity/S:Job", conditional, claimIfNew, null, { spread: true, claimRows: 0 }),
    ).rejects.toThrow(/invalid option claimRows: 0/);
  });

  it("claims one candidate with claimRows 1, in a random order of its own", async () => {
    const { fake, catalog, puts } = await setup(10);
    const first = new Set<unknown>();
    for (let i = 0; i < 6; i++) {
      const { batch, idleEtag } = await catalog.stateChangeOnce(
        "/entity/S:Job/state=new",
        conditional,
        claimIfNew,
        null,
        { spread: true, claimRows: 1 },
      );
      expect(batch).toHaveLength(1);
      expect(idleEtag).toBeNull();
      first.add(batch[0]?.[0].id);
    }
    expect(puts()).toBe(6);
    expect(
      fake.requests.filter((r) => r.method === "PUT").every((r) => r.headers["if-match"] === undefined),
    ).toBe(true);
    expect(first.size).toBe(6);
    // Not always the first row: over 6 claims from 10 candidates, the row order would give ids 1 to 6.
    expect([...first].sort()).not.toEqual([1, 2, 3, 4, 5, 6]);
    expect(fake.rows("S:Job").filter((row) => row.state === "claimed")).toHaveLength(6);
  });

  it("reads again when every candidate it tried was taken after the GET, with no ConcurrentUpdate", async () => {
    const { fake, catalog } = await setup(2);
    const rival = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
    });
    const rows = fake.rows("S:Job");
    const { batch } = await catalog.stateChangeOnce(
      "/entity/S:Job/state=new",
      conditional,
      async (row) => {
        // The rival claims row 1 between our GET and our PUTs.
        if (row.id === 2)
          await rival.put(conditional, { json: [{ RID: rows[0]?.RID, expected: "new", state: "rival" }] });
        return claimIfNew(row);
      },
      null,
      { spread: true, claimRows: 1 },
    );
    expect(batch.map(([candidate]) => candidate.id)).toEqual([2]);
    expect(fake.rows("S:Job").map((row) => [row.id, row.state])).toEqual([
      [1, "rival"],
      [2, "claimed"],
    ]);
  });

  it("guards a claim of every candidate: a lost race is a 412 that commits nothing, then a fresh read", async () => {
    const { fake, catalog } = await setup(1);
    const rival = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
    });
    const versionBefore = fake.version;
    const result = await catalog.stateChangeOnce(
      "/entity/S:Job/state=new",
      conditional,
      async (row) => {
        // The rival claims the only candidate between our GET and our PUT (a second insert, the same race).
        if (fake.version === versionBefore)
          await rival.stateChangeOnce("/entity/S:Job/state=new", conditional, claimIfNew, null, {
            spread: true,
          });
        return claimIfNew(row);
      },
      null,
      { spread: true },
    );
    expect(result.batch).toEqual([]);
    expect(result.idleEtag).toMatch(/^"/); // the fresh read found nothing left: idle, no second claim
    expect(fake.version).toBe(versionBefore + 1); // the rival's claim alone committed
    const puts = fake.requests.filter((r) => r.method === "PUT");
    expect(puts.map((r) => [r.status, r.headers["if-match"] !== undefined])).toEqual([
      [200, true],
      [412, true],
    ]);
    expect(fake.rows("S:Job").map((row) => row.state)).toEqual(["claimed"]);
  });

  it("answers idle when there is nothing, and gives up after 2 rounds when nothing it tries matches", async () => {
    const { fake, catalog, recorder } = await setup(2);
    const never = (row: Row) => ({ RID: row.RID, expected: "no such state", state: "claimed" });
    const lost = await catalog.stateChangeOnce("/entity/S:Job/state=new", conditional, never, null, {
      spread: true,
    });
    expect(lost).toEqual({ idleEtag: null, batch: [] });
    expect(fake.requests.filter((r) => r.method === "GET")).toHaveLength(2);
    expect(fake.requests.filter((r) => r.method === "PUT")).toHaveLength(2); // one write per read
    expect(recorder.messages("info")).toContain(
      "Every candidate tried was taken by another agent (or the update path matches none of them).",
    );
    const idle = await catalog.stateChangeOnce("/entity/S:Job/state=gone", conditional, claimIfNew, null, {
      spread: true,
    });
    expect(idle.batch).toEqual([]);
    expect(idle.idleEtag).toMatch(/^"/);
  });

  it("refuses an update path that renames no column, which could not tell a lost race", async () => {
    const { catalog, fake } = await setup(2);
    const error = await catalog
      .stateChangeOnce(query, update, claim, null, { spread: true })
      .catch((e: unknown) => e);
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toMatch(/invalid option spread/);
    expect(fake.requests).toEqual([]);
  });
});
