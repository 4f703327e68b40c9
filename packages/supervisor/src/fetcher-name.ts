/** A directory entry recognised as a fetcher file. */
export interface FetcherFileName {
  /** The stem: the fetcher's name. */
  fetcher: string;
  /** The run number. */
  runStarted: number;
  /** `true` for `<stem>.<run>.txt`, `false` for `<stem>.<run>.txt.part`. */
  isComplete: boolean;
}

/** What {@link parseFetcherFileName} makes of a name. */
export type ParsedName = ({ kind: "fetcher" } & FetcherFileName) | { kind: "bad-run" } | { kind: "other" };

const runPattern = /^[+-]?[0-9]+$/;

/**
 * Classifies a directory entry's name: `<stem>.<run>.txt` (complete) or `<stem>.<run>.txt.part` (being written),
 * with a non-empty stem and no other dot. A fetcher-like name whose run is not a safe integer is `bad-run`;
 * anything else is `other` (ignored silently).
 *
 * @param name - a file name, without directory
 */
export function parseFetcherFileName(name: string): ParsedName {
  const parts = name.split(".");
  const isComplete = parts.length === 3 && parts[2] === "txt";
  const isPart = parts.length === 4 && parts[2] === "txt" && parts[3] === "part";
  const [stem = "", run = ""] = parts;
  if ((!isComplete && !isPart) || stem === "") return { kind: "other" };
  const runStarted = Number(run);
  if (!runPattern.test(run) || !Number.isSafeInteger(runStarted)) return { kind: "bad-run" };
  return { kind: "fetcher", fetcher: stem, runStarted, isComplete };
}

/** The name of a run's complete file: `<fetcher>.<run>.txt`. */
export function completeFileName(fetcher: string, runStarted: number): string {
  return `${fetcher}.${runStarted}.txt`;
}
