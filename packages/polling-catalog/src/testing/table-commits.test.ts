import { describe, expect, it } from "vitest";
import { TableCommits } from "./table-commits.js";

describe("TableCommits", () => {
  it("a commit on a table conflicts with every transaction on it that began before, not with later ones", () => {
    const commits = new TableCommits();
    const first = commits.begin("S:Job");
    const second = commits.begin("S:Job");
    expect(commits.conflicts("S:Job", first)).toBe(false);
    commits.commit("S:Job");
    expect(commits.conflicts("S:Job", second)).toBe(true);
    expect(commits.conflicts("S:Job", commits.begin("S:Job"))).toBe(false);
  });

  it("writes to different tables never conflict", () => {
    const commits = new TableCommits();
    const job = commits.begin("S:Job");
    commits.commit("S:Other");
    expect(commits.conflicts("S:Job", job)).toBe(false);
  });
});
