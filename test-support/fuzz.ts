import { appendFileSync } from "node:fs";
import fc from "fast-check";

/**
 * Inputs per property: `X_FUZZ_RUNS` when set (`pnpm fuzz` sets a long budget), else 300, a short budget that
 * keeps CI fast while still trying the shapes each property names.
 */
export function fuzzRuns(): number {
  const fromEnv = Number(process.env.X_FUZZ_RUNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 300;
}

/**
 * Checks a fast-check property with the budget of {@link fuzzRuns}, and, when `X_FUZZ_REPORT` names a file,
 * appends one JSON line to it: `{ parser, runs, ms, seed }` (what `pnpm fuzz` summarises for
 * docs/reliability.md). A failure throws fast-check's report, with the seed and the shrunk input.
 *
 * @param parser - what is fuzzed, as the reliability table names it (`"supervisor: protocol line"`)
 * @param property - the property, synchronous or asynchronous
 * @param share - the share of the budget this property takes, for slow properties (a real socket or
 *   process per input); default 1
 */
export async function checkProperty(
  parser: string,
  property: fc.IProperty<[unknown, ...unknown[]]> | fc.IAsyncProperty<[unknown, ...unknown[]]>,
  share = 1,
): Promise<void> {
  const runs = Math.max(1, Math.round(fuzzRuns() * share));
  const seed = Number(process.env.X_FUZZ_SEED) || Date.now() ^ (Math.random() * 0x7fffffff);
  const started = performance.now();
  await fc.assert(property as fc.IAsyncProperty<[unknown, ...unknown[]]>, { numRuns: runs, seed });
  const report = process.env.X_FUZZ_REPORT;
  if (report)
    appendFileSync(
      report,
      `${JSON.stringify({ parser, runs, ms: Math.round(performance.now() - started), seed })}\n`,
    );
}

/**
 * Calls `parse`; passes when it returns, or throws an error `isDocumented` accepts. Anything else (a
 * `TypeError`, a `RangeError`, an error of the wrong code) is rethrown for fast-check to report.
 *
 * @returns what `parse` returned, or `undefined` when it rejected the input as documented
 */
export function parsesOrRejects<T>(parse: () => T, isDocumented: (error: unknown) => boolean): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (isDocumented(error)) return undefined;
    throw error;
  }
}

/** Strings as attackers and broken peers send them: any Unicode, lone surrogates, control characters, huge digits. */
export function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.string({ unit: "grapheme", maxLength: 50 }),
    fc.stringMatching(/^[\d.eE+-]{0,400}[a-zA-Z]{0,4}$/),
    fc.constantFrom("", " ", "\0", "\n", "NaN", "Infinity", "-0", "1e309", "9".repeat(400), "0x10", "1_000"),
  );
}
