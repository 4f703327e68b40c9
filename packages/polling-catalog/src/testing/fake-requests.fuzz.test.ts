import { checkProperty, hostileString } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FakeCatalog } from "./fake-catalog.js";
import { etagFor, preconditionFails } from "./preconditions.js";

/** The statuses the README says the fake answers; 500 means a bug of the fake. */
const documented = new Set([200, 204, 304, 400, 404, 405, 409, 412, 415, 501]);

const piece = fc.oneof(
  hostileString(),
  fc.constantFrom(
    "id=1",
    "state=queued",
    "id::null::",
    "!(id=2)",
    "id=1&state=a;id=2",
    "(id=1",
    "x:=state",
    "e:=state",
    "@sort(id::desc::)",
    "@sort(nope)",
    "%zz",
    "%2F",
    "",
    "RID=1-0",
    "n=1e999",
    "flag=maybe",
    "at=2026-13-45",
  ),
);

const url = fc
  .tuple(
    fc.constantFrom("/ermrest/catalog/1/", "/ermrest/catalog/2/", "/", "/ermrest/catalog/1"),
    fc.constantFrom("entity", "attributegroup", "attribute", "aggregate", "junk", ""),
    fc.constantFrom("/S:T", "/T", "/S:Nope", "/S%3AT", "/:", "/S:T/id;state", "/S:T/id,e:=state;state", ""),
    fc.array(piece, { maxLength: 3 }),
    fc.constantFrom("", "?limit=2", "?limit=-1", "?limit=none", "?limit", "?limit=x", "?before=1", "?%"),
  )
  .map(
    ([prefix, api, table, filters, query]) =>
      `${prefix}${api}${table}${filters.map((f) => `/${f}`).join("")}${query}`,
  );

const body = fc.oneof(
  hostileString(),
  fc.json({ maxDepth: 3 }),
  fc
    .array(
      fc.record(
        { id: fc.oneof(fc.integer(), fc.constant(null), fc.string()), state: fc.jsonValue(), e: fc.string() },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    )
    .map((rows) => JSON.stringify(rows)),
);

const etagList = fc.oneof(
  hostileString(),
  fc.constantFrom("*", 'W/"x"', '"a", "b"', '"x-gzip"', ""),
  fc.nat({ max: 5 }).map((version) => etagFor("*/*", version)),
);

describe("the fake ERMrest under fuzzing", () => {
  it("answers any request with a documented status, never a 500 or a throw", async () => {
    await checkProperty(
      "polling-catalog: fake ERMrest request",
      fc.property(
        fc.constantFrom("GET", "PUT", "POST", "DELETE", "PATCH"),
        url,
        body,
        fc.option(etagList, { nil: undefined }),
        fc.option(etagList, { nil: undefined }),
        fc.option(fc.constantFrom("application/json", "text/csv", "*/*"), { nil: undefined }),
        (method, path, text, ifMatch, ifNoneMatch, contentType) => {
          const catalog = new FakeCatalog({
            "S:T": { key: ["id"], rows: [{ id: 1, state: "a" }], columns: ["state"], types: { id: "int4" } },
          });
          const headers: Record<string, string> = { accept: "*/*" };
          if (ifMatch !== undefined) headers["if-match"] = ifMatch;
          if (ifNoneMatch !== undefined) headers["if-none-match"] = ifNoneMatch;
          if (contentType !== undefined) headers["content-type"] = contentType;
          const reply = catalog.handle({ method, url: path, headers, body: text });
          expect(documented, `${method} ${path} → ${reply.status} ${reply.body}`).toContain(reply.status);
        },
      ),
    );
  });

  it("an ETag it sent always matches itself, quoted, weak, with -gzip or in a list", async () => {
    await checkProperty(
      "polling-catalog: fake ERMrest preconditions",
      fc.property(hostileString(), fc.nat(), hostileString(), (accept, version, other) => {
        const etag = etagFor(accept, version);
        for (const ifMatch of [etag, `W/${etag}`, `${etag.slice(0, -1)}-gzip"`, `"x", ${etag}`, "*"])
          expect(preconditionFails(ifMatch, undefined, etag)).toBe(false);
        expect(preconditionFails(undefined, etag, etag)).toBe(true);
        expect(typeof preconditionFails(other, other, etag)).toBe("boolean");
      }),
    );
  });
});
