/**
 * Whether Node `version` is in an `engines` range of the forms drivers use (`>=22`, `20.x || 22.x`,
 * `^22.12.0 || >=24`). A comparator of any other form counts as satisfied: the check only refuses what it
 * understands.
 */
export function nodeSatisfies(range: string, version: string): boolean {
  const actual = version.split(".").map(Number);
  return range.split("||").some((alternative) => {
    const part = alternative.trim();
    const match = /^(>=|\^)?\s*v?(\d+)(?:\.(\d+|x))?(?:\.(\d+|x))?$/.exec(part);
    if (!match) return true;
    const [, operator, ...rest] = match;
    const wanted = rest.map((n) => (n === undefined || n === "x" ? undefined : Number(n)));
    if (operator === ">=") return compare(actual, wanted) >= 0;
    if (actual[0] !== wanted[0]) return false;
    return operator === "^" ? compare(actual, wanted) >= 0 : matchesPrefix(actual, wanted);
  });
}

function compare(actual: number[], wanted: (number | undefined)[]): number {
  for (let i = 0; i < 3; i++) {
    const diff = (actual[i] ?? 0) - (wanted[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function matchesPrefix(actual: number[], wanted: (number | undefined)[]): boolean {
  return wanted.every((n, i) => n === undefined || n === actual[i]);
}
