// Here rather than in routing.ts, so that the CLI reads --ranges without loading the routing (and node:crypto).
/** The 16 id ranges, one per first hex digit. */
export const ranges: readonly string[] = [..."0123456789abcdef"];
const allRanges = ranges;

/**
 * The ranges a server serves, from a list of hex digits and spans: `0-7`, `8-f`, `0,3,a-c` (case-insensitive,
 * ascending spans). Returns the distinct digits in ascending order, or `undefined` when `spec` is not such
 * a list.
 */
export function parseRanges(spec: string): string[] | undefined {
  const chosen = new Set<string>();
  for (const part of spec.toLowerCase().split(",")) {
    const span = /^([0-9a-f])(?:-([0-9a-f]))?$/.exec(part.trim());
    if (span === null) return undefined;
    const from = allRanges.indexOf(span[1] as string);
    const to = allRanges.indexOf(span[2] ?? (span[1] as string));
    if (to < from) return undefined;
    for (const digit of allRanges.slice(from, to + 1)) chosen.add(digit);
  }
  return allRanges.filter((digit) => chosen.has(digit));
}

/** The shortest spelling of a set of ranges for logs and names: `0-7`, `0-3,a,c-f`. */
export function formatRanges(list: readonly string[]): string {
  const indexes = list.map((digit) => allRanges.indexOf(digit)).sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < indexes.length; ) {
    let j = i;
    while (j + 1 < indexes.length && (indexes[j + 1] as number) === (indexes[j] as number) + 1) j++;
    const from = allRanges[indexes[i] as number] as string;
    const to = allRanges[indexes[j] as number] as string;
    parts.push(j === i ? from : `${from}-${to}`);
    i = j + 1;
  }
  return parts.join(",");
}
