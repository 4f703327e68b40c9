import { checkProperty } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ClaimedEvent, PollingErmrestCatalog, type Row } from "../src/index.js";
import { startStubServer } from "./stub-server.js";

interface Put {
  body: unknown;
  ifMatch: string | undefined;
}

/** A stub ERMrest whose candidates and PUT answers each run sets. */
async function scriptedServer() {
  const script = { rows: [] as unknown[], putAnswers: [] as string[], gets: 0, puts: [] as Put[] };
  const stub = await startStubServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      if (request.method === "GET") {
        script.gets++;
        response.writeHead(200, { "Content-Type": "application/json", ETag: '"v1"' });
        response.end(JSON.stringify(script.rows));
        return;
      }
      script.puts.push({ body: JSON.parse(text), ifMatch: request.headers["if-match"] });
      response.writeHead(200, { "Content-Type": "application/json", ETag: '"v2"' });
      const answer = script.putAnswers.shift() ?? "[]";
      response.end(answer === "applied" ? text : answer); // "applied": the rows it updated, as ERMrest lists them
    });
  });
  return { stub, script };
}

/** Candidate rows: JSON objects of any shape, most with an id. */
const rows = fc.array(
  fc.record(
    {
      id: fc.integer({ min: 0, max: 1_000 }),
      state: fc.jsonValue({ maxDepth: 1 }),
      extra: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
    },
    { requiredKeys: [] },
  ),
  { maxLength: 8 },
);

/** What a PUT answers: the update applied, nothing matched, or anything else a broken server sends. */
const putAnswer = fc.oneof(
  fc.constant("applied"),
  fc.constant("[]"),
  fc.json({ maxDepth: 2 }),
  fc.string({ maxLength: 20 }),
);

describe("stateChangeOnce under fuzzing", () => {
  it("claims exactly the transformed candidates, in order, or at most claimRows with spread, whatever the rows and answers", async () => {
    const { stub, script } = await scriptedServer();
    await using _stub = stub;
    await checkProperty(
      "polling-catalog: stateChangeOnce rows",
      fc.asyncProperty(
        rows,
        fc.array(fc.constantFrom("update", "null", "undefined"), { minLength: 8, maxLength: 8 }),
        fc.array(putAnswer, { maxLength: 12 }),
        fc.boolean(),
        async (candidates, decisions, answers, spread) => {
          script.rows = candidates;
          script.gets = 0;
          script.puts = [];
          const catalog = new PollingErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1 });
          const claimed: ClaimedEvent[] = [];
          catalog.on("claimed", (event) => claimed.push(event));
          const seen: Row[] = [];
          const transform = (row: Row): Row | null | undefined => {
            seen.push(row);
            const decision = decisions[(seen.length - 1) % candidates.length];
            if (decision === "null") return null;
            if (decision === "undefined") return undefined;
            return { id: row.id ?? null, expected: row.state ?? null, state: "claimed" };
          };
          script.putAnswers = [...answers];

          const result = await catalog.stateChangeOnce(
            "/entity/S:T",
            spread ? "/attributegroup/S:T/id,expected:=state;state" : "/attributegroup/S:T/id;state",
            transform,
            null,
            { spread },
          );
          const received = JSON.parse(JSON.stringify(candidates)) as Row[]; // as the catalog read them
          const plan = received.flatMap((row, i) =>
            decisions[i] === "update"
              ? [[row, { id: row.id ?? null, expected: row.state ?? null, state: "claimed" }]]
              : [],
          );
          expect(seen.length).toBe(candidates.length * script.gets);
          if (plan.length === 0) {
            expect(result).toEqual({ idleEtag: '"v1"', batch: [] });
            expect(script.puts).toEqual([]);
            return;
          }
          expect(result.idleEtag).toBeNull();
          if (!spread) {
            expect(result.batch).toEqual(plan);
            expect(script.puts).toEqual([{ body: plan.map(([, update]) => update), ifMatch: '"v1"' }]);
            expect(claimed).toEqual([
              { queryPath: "/entity/S:T", updatePath: expect.any(String), batch: plan },
            ]);
            return;
          }
          // Spread: at most 2 reads, one PUT each of at most claimRows (10) updates of the plan; the batch is
          // the pairs of the last PUT that its answer lists by key. A first PUT that takes every candidate is
          // guarded by the read's ETag.
          expect(result.batch.length).toBeLessThanOrEqual(10);
          expect(script.puts.length).toBeLessThanOrEqual(2);
          for (const [index, put] of script.puts.entries()) {
            expect(put.ifMatch).toBe(index === 0 && plan.length <= 10 ? '"v1"' : undefined);
            const body = put.body as unknown[];
            expect(body.length).toBeGreaterThan(0);
            expect(body.length).toBeLessThanOrEqual(10);
            for (const update of body) expect(plan.map(([, u]) => u)).toContainEqual(update);
          }
          if (result.batch.length > 0) {
            for (const pair of result.batch) expect(plan).toContainEqual(pair);
            for (const [, update] of result.batch) expect(script.puts.at(-1)?.body).toContainEqual(update);
            expect(claimed).toEqual([
              { queryPath: "/entity/S:T", updatePath: expect.any(String), batch: result.batch },
            ]);
          } else expect(claimed).toEqual([]);
        },
      ),
      0.2,
    );
  }, 600_000);
});
