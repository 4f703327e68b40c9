import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Orders test files longest first across every project, by the durations vitest cached from the last run;
 * files without a cached duration (new ones) go first, in vitest's own order. Vitest's default runs the
 * projects one after another, so the longest file of the last project (supervisor's `daemon.test.ts`)
 * started a minute into `pnpm test:fast` and ran alone at the end; longest first lets the parallel workers
 * finish together. The order is the only change: failed files are not moved ahead as vitest does.
 */
export class LongestFirstSequencer extends BaseSequencer {
  /** Vitest's order, then stably by cached duration, longest (or unknown) first. */
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const duration = (spec: TestSpecification) =>
      this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? Number.POSITIVE_INFINITY;
    return ordered
      .map((spec, index) => ({ spec, index, duration: duration(spec) }))
      .sort((a, b) => (a.duration === b.duration ? a.index - b.index : b.duration - a.duration))
      .map(({ spec }) => spec);
  }
}
