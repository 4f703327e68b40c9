// The check of a consumer-group run: several member processes each log the records they handled and the
// group's pauses, seeks and resumes they caused; this module reads those logs together and says whether the
// group lost, skipped or over-delivered records, and what the pause cost.

/** One record a member handled (priced), logged before its pulse. */
export interface Handling {
  member: string;
  /** The record's stream id, `"<ms>-<seq>"`. */
  id: string;
  /** When the member handled it (`Date.now()`, one clock for every process on the host). */
  at: number;
  /** Whether the member's stream said it was paused (by itself or by the group) at that moment. */
  paused: boolean;
}

/** What a member did to the group, with the time it logged it. */
export type GroupEvent =
  /** Its checkpoint paused the group (logged at the `down` event, once the pause resolved); `id` detected it. */
  | { kind: "down"; member: string; at: number; id: string }
  /** Its recovery callback moved the group back to `id` (logged before the seek). */
  | { kind: "seek"; member: string; at: number; id: string }
  /** Its recovering heartbeat returned: the resume was called. */
  | { kind: "resumed"; member: string; at: number };

/** Everything {@link checkGroupRun} reads. */
export interface GroupRun {
  /** Every record the stream held, in stream order. */
  ids: readonly string[];
  handlings: readonly Handling[];
  events: readonly GroupEvent[];
  /** How many members read at once: the bound of what is handed out but not acknowledged is one batch each. */
  members: number;
  /** The members' `batchSize`. */
  batchSize: number;
}

/** One interval during which the group was paused: from a pause while it read, to the next resume. */
export interface PauseEpisode {
  /** The `down` event that paused it. */
  from: number;
  /** The first resume after it; undefined when none came. */
  to: number | undefined;
  by: string;
  /** Records handled inside the interval, by any member. */
  handled: number;
  /** From `from` to the last record handled inside the interval, by any member; 0 when none was. */
  latencyMs: number;
}

/** The figures of a run, printed whether it passed or not. */
export interface GroupRunFigures {
  records: number;
  handlings: number;
  /** Records never handled. */
  missing: number;
  /** Handlings beyond the first of each record. */
  duplicates: number;
  /** `members × batchSize + replayedSpan`. */
  duplicateBound: number;
  /** The earliest id a member sought (undefined without a seek), and when. */
  replayPoint: string | undefined;
  replayAt: number | undefined;
  /** Records at or after the replay point handled before the replay: what the replay hands out again. */
  replayedSpan: number;
  /** Records at or after the replay point not handled after the replay. */
  skippedAfterReplay: number;
  /** The first record whose pulse paused the group. */
  detectedAt: string | undefined;
  /**
   * Records from the first detection up to the replay point that were handled before the replay and not
   * after it: handled with stale dependency data, and not replayed.
   */
  staleNotReplayed: number;
  /** Handlings while the member's stream said it was paused. */
  handledSeenPaused: number;
  pauses: PauseEpisode[];
  /** `members × batchSize`: the most records handled in one pause episode. */
  pausedBound: number;
}

/** What {@link checkGroupRun} found: `failures` empty when the run is right. */
export interface GroupRunCheck {
  ok: boolean;
  /** One sentence per broken rule, with examples of the records concerned. */
  failures: string[];
  figures: GroupRunFigures;
}

/** How many ids a failure names. */
const EXAMPLES = 5;

/**
 * Checks a consumer-group run against its rules:
 *
 * - every record is handled at least once;
 * - every record at or after the replay point (the earliest id a member sought) is handled after that seek;
 * - while the group is paused (from a `down` event while it read to the next `resumed`), at most
 *   `members × batchSize` records are handled, per pause, and every pause ends;
 * - at most `members × batchSize + replayedSpan` duplicates: one unacknowledged batch per member at a pause or
 *   a kill, plus what the replay hands out again;
 * - a downtime happened and a seek recovered it (else the run proves nothing about them).
 */
export function checkGroupRun(run: GroupRun): GroupRunCheck {
  const failures: string[] = [];
  const index = new Map(run.ids.map((id, position) => [id, position]));
  const count = new Uint32Array(run.ids.length);
  const firstAt = new Float64Array(run.ids.length).fill(Number.POSITIVE_INFINITY);
  const lastAt = new Float64Array(run.ids.length).fill(Number.NEGATIVE_INFINITY);
  const unknown: string[] = [];
  for (const { id, at } of run.handlings) {
    const position = index.get(id);
    if (position === undefined) {
      unknown.push(id);
      continue;
    }
    count[position]!++;
    firstAt[position] = Math.min(firstAt[position]!, at);
    lastAt[position] = Math.max(lastAt[position]!, at);
  }
  if (unknown.length > 0)
    failures.push(`${unknown.length} handlings of records the stream never held: ${examples(unknown)}`);

  const missing = run.ids.filter((_, position) => count[position] === 0);
  if (missing.length > 0) failures.push(`${missing.length} records never handled: ${examples(missing)}`);

  const events = [...run.events].sort((a, b) => a.at - b.at);
  const downs = events.filter((event) => event.kind === "down");
  if (downs.length === 0) failures.push("no member paused the group: no downtime was detected");
  const detected = downs.map((event) => event.id).sort(compareIds)[0];

  const seeks = events.filter((event) => event.kind === "seek");
  if (seeks.length === 0) failures.push("no member sought the group back: no downtime was recovered");
  const replayPoint = seeks.map((event) => event.id).sort(compareIds)[0];
  const replayAt = seeks.find((event) => event.id === replayPoint)?.at;
  /** Without a seek nothing is at or after the replay point, and nothing was handled after it. */
  const since = replayAt ?? Number.POSITIVE_INFINITY;
  const replayFrom = replayPoint === undefined ? run.ids.length : firstAtOrAfter(run.ids, replayPoint);
  const detectedFrom = detected === undefined ? run.ids.length : firstAtOrAfter(run.ids, detected);

  const skipped: string[] = [];
  let replayedSpan = 0;
  for (let position = replayFrom; position < run.ids.length; position++) {
    if (firstAt[position]! < since) replayedSpan++;
    if (lastAt[position]! < since) skipped.push(run.ids[position]!);
  }
  if (skipped.length > 0)
    failures.push(
      `${skipped.length} records at or after the replay point ${replayPoint} not handled after the replay: ${examples(skipped)}`,
    );

  let staleNotReplayed = 0;
  for (let position = detectedFrom; position < replayFrom; position++)
    if (firstAt[position]! < since && lastAt[position]! < since) staleNotReplayed++;

  const pausedBound = run.members * run.batchSize;
  const pauses = pauseEpisodes(events, run.handlings);
  for (const pause of pauses) {
    if (pause.to === undefined)
      failures.push(`the group paused by ${pause.by} at ${pause.from} never resumed`);
    if (pause.handled > pausedBound)
      failures.push(
        `${pause.handled} records handled while the group was paused (from ${pause.from}, by ${pause.by}), more than ${pausedBound}`,
      );
  }

  const handled = count.reduce((sum, times) => sum + (times > 0 ? 1 : 0), 0);
  const duplicates = run.handlings.length - unknown.length - handled;
  const duplicateBound = pausedBound + replayedSpan;
  if (duplicates > duplicateBound)
    failures.push(`${duplicates} duplicate handlings, more than ${duplicateBound}`);

  return {
    ok: failures.length === 0,
    failures,
    figures: {
      records: run.ids.length,
      handlings: run.handlings.length,
      missing: missing.length,
      duplicates,
      duplicateBound,
      replayPoint,
      replayAt,
      replayedSpan,
      skippedAfterReplay: skipped.length,
      detectedAt: detected,
      staleNotReplayed,
      handledSeenPaused: run.handlings.filter((handling) => handling.paused).length,
      pauses,
      pausedBound,
    },
  };
}

/** The group's pause episodes: a `down` while the group reads pauses it, a `resumed` lets it read again. */
function pauseEpisodes(events: readonly GroupEvent[], handlings: readonly Handling[]): PauseEpisode[] {
  const episodes: PauseEpisode[] = [];
  let open: PauseEpisode | undefined;
  for (const event of events) {
    if (event.kind === "down" && !open) {
      open = { from: event.at, to: undefined, by: event.member, handled: 0, latencyMs: 0 };
      episodes.push(open);
    } else if (event.kind === "resumed" && open) {
      open.to = event.at;
      open = undefined;
    }
  }
  for (const episode of episodes) {
    const end = episode.to ?? Number.POSITIVE_INFINITY;
    for (const { at } of handlings) {
      if (at <= episode.from || at >= end) continue;
      episode.handled++;
      episode.latencyMs = Math.max(episode.latencyMs, at - episode.from);
    }
  }
  return episodes;
}

/** Orders two stream ids `"<ms>-<seq>"` as Redis does. */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split("-").map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split("-").map(BigInt) as [bigint, bigint];
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

/** The position of the first of `ids` (in stream order) at or after `id`; `ids.length` when none is. */
function firstAtOrAfter(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareIds(ids[middle]!, id) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function examples(ids: readonly string[]): string {
  return ids.slice(0, EXAMPLES).join(", ") + (ids.length > EXAMPLES ? ", …" : "");
}
