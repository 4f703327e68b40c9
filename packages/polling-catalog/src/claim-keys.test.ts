import { describe, expect, it } from "vitest";
import { appliedPairs, keyNames } from "./claim-keys.js";

describe("keyNames", () => {
  it("lists the body names of the key columns, renamed ones by their new name, decoded", () => {
    expect(keyNames("/attributegroup/S:Job/RID,expected:=state;state,owner")).toEqual(["RID", "expected"]);
    expect(keyNames("/attributegroup/S:Job/my%20id;state")).toEqual(["my id"]);
    expect(keyNames("/entity/S:Job")).toBeUndefined();
    expect(keyNames("/attributegroup/S:Job/%E0%A4%A;x")).toBeUndefined();
  });
});

describe("appliedPairs", () => {
  const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [1, 2, 3].map((id) => [
    { RID: `r${id}` },
    { RID: `r${id}`, expected: "queued", state: "claimed" },
  ]);

  it("keeps the pairs whose keys the answer lists, in their own order", () => {
    const answer = [
      { RID: "r3", expected: "queued", state: "claimed" },
      { RID: "r1", expected: "queued", state: "claimed" },
    ];
    expect(appliedPairs(answer, pairs, ["RID", "expected"]).map(([row]) => row.RID)).toEqual(["r1", "r3"]);
  });

  it("keeps none for an empty or malformed answer", () => {
    expect(appliedPairs([], pairs, ["RID"])).toEqual([]);
    expect(appliedPairs({ RID: "r1" }, pairs, ["RID"])).toEqual([]);
    expect(appliedPairs([null, 1], pairs, ["RID"])).toEqual([]);
  });
});
