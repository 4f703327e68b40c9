/** Lower case, without `_`, `-` and spaces: `timeout_ms`, `timeout-ms` and `timeoutMs` compare equal. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[\s_-]/g, "");
}

/** The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + same);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The known name a mistyped one most likely meant, for a "did you mean …?" hint: the same name in another
 * case or spelling (`timeout_ms` → `timeoutMs`), the name plus a unit suffix (`timeout` → `timeoutMs`,
 * `maxMemory` → `maxMemoryBytes`; at least three letters and half the name), or a name a few typos away (`timout` → `timeout`). Case, `_` and `-` are
 * ignored; "a few" is at most a third of the longer name, and at least 1.
 *
 * @param name - the unknown name
 * @param known - the names that would have been accepted
 * @returns the closest known name, or `undefined` when none is close enough
 */
export function nearestName(name: string, known: Iterable<string>): string | undefined {
  const wanted = folded(name);
  if (wanted === "") return undefined;
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const folding = folded(candidate);
    const limit = Math.max(1, Math.floor(Math.max(wanted.length, folding.length) / 3));
    const extends_ = wanted.length >= 3 && wanted.length * 2 >= folding.length && folding.startsWith(wanted);
    const score = extends_ ? (folding.length - wanted.length) / 100 : editDistance(wanted, folding);
    if (score <= limit && score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
