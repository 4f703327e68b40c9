import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import { startTestFake } from "../test/helpers.js";
import { leaseClaim } from "./lease.js";
import { PollingErmrestCatalog } from "./polling-catalog.js";

async function setup() {
  const fake = await startTestFake({
    "S:Job": {
      key: ["id"],
      columns: ["state", "owner", "lease_until"],
      types: { id: "int4", lease_until: "timestamptz" },
      rows: [
        { id: 1, state: "queued" },
        { id: 2, state: "claimed", owner: "dead", lease_until: new Date(Date.now() - 1_000).toISOString() },
        { id: 3, state: "claimed", owner: "alive", lease_until: new Date(Date.now() + 60_000).toISOString() },
        { id: 4, state: "complete", owner: "done" },
      ],
    },
  });
  fake.writeDurationMs = 0;
  const catalog = () =>
    new PollingErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
  return { fake, catalog };
}

describe("leaseClaim", () => {
  it("builds the paths, encoding names and values", () => {
    const lease = leaseClaim({ table: "S:Job", owner: "a", leaseMs: 1_000, readyState: "new job", limit: 7 });
    expect(lease.queryPath).toBe("/entity/S:Job/state=new%20job?limit=7");
    expect(lease.expiredPath).toBe("/entity/S:Job/state=claimed@sort(lease_until)?limit=7");
    expect(lease.updatePath).toBe(
      "/attributegroup/S:Job/RID,expected:=state,held:=lease_until;state,lease_until,owner",
    );
  });

  it("claims ready rows and expired claims with who and until when; leaves live claims alone", async () => {
    const { fake, catalog } = await setup();
    const lease = leaseClaim({ table: "S:Job", owner: "me", leaseMs: 30_000 });
    const agent = catalog();
    const before = Date.now();
    const ready = await agent.stateChangeOnce(lease.queryPath, lease.updatePath, lease.transform, null, {
      spread: true,
    });
    expect(ready.batch.map(([row]) => row.id)).toEqual([1]);
    const expired = await agent.stateChangeOnce(lease.expiredPath, lease.updatePath, lease.transform, null, {
      spread: true,
    });
    expect(expired.batch.map(([row]) => row.id)).toEqual([2]);
    const rows = new Map(fake.rows("S:Job").map((row) => [row.id, row]));
    for (const id of [1, 2]) {
      expect(rows.get(id)).toMatchObject({ state: "claimed", owner: "me" });
      expect(Date.parse(rows.get(id)?.lease_until as string)).toBeGreaterThanOrEqual(before + 30_000);
    }
    expect(rows.get(3)).toMatchObject({ state: "claimed", owner: "alive" });
    expect(rows.get(4)).toMatchObject({ state: "complete", owner: "done" });
    const nothing = await agent.stateChangeOnce(lease.expiredPath, lease.updatePath, lease.transform, null, {
      spread: true,
    });
    expect(nothing.batch).toEqual([]);
  });

  it("of two agents reclaiming the same expired row, exactly one gets it", async () => {
    const { fake, catalog } = await setup();
    const agents = ["x", "y"].map((owner) => ({
      catalog: catalog(),
      lease: leaseClaim({ table: "S:Job", owner, leaseMs: 30_000 }),
    }));
    // Both read the expired row before either writes.
    const reads = await Promise.all(agents.map(({ catalog: c, lease }) => c.get(lease.expiredPath)));
    const updates = await Promise.all(
      agents.map(({ lease }, i) =>
        lease.transform((reads[i]?.json() as Array<Record<string, unknown>> | undefined)?.[0] ?? {}),
      ),
    );
    const answers = await Promise.all(
      agents.map(({ catalog: c, lease }, i) => c.put(lease.updatePath, { json: [updates[i]] })),
    );
    expect(answers.map((answer) => (answer.json() as unknown[]).length).sort()).toEqual([0, 1]);
    const owner = fake.rows("S:Job").find((row) => row.id === 2)?.owner;
    expect(["x", "y"]).toContain(owner);
  });

  it("refuses bad options with ERR_X_POLLING_CATALOG_INVALID_OPTION", () => {
    for (const bad of [
      { table: "S:Job", owner: "", leaseMs: 1_000 },
      { table: "S:Job", owner: "a", leaseMs: 0 },
      { table: "S:Job", owner: "a", leaseMs: 2 ** 31 },
      { table: "S:Job", owner: "a", leaseMs: 1_000, limit: 0 },
    ]) {
      let error: unknown;
      try {
        leaseClaim(bad);
      } catch (caught) {
        error = caught;
      }
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    }
  });
});
