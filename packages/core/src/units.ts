import { UsageError } from "./command-line.js";

const durationPattern = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/;
const sizePattern = /^(\d+(?:\.\d*)?|\.\d+)(?:([kmg])(?:i?b)?|b)?$/i;
const msPerDurationUnit: Record<string, number> = {
  "": 1_000,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const bytesPerSizeUnit: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** The longest duration a Node timer can wait, in milliseconds (2³¹ − 1, about 24.8 days); longer ones fire at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Parses a command-line duration as `timeout(1)` writes it: seconds (fractions allowed) with an optional
 * `s`, `m`, `h` or `d` suffix: `"10"`, `"0.5"`, `"2m"`, `"1.5h"`. Every `@x` command reads durations this way.
 *
 * @param option - the flag, for the error (`"--timeout"`)
 * @param text - the value as typed
 * @returns milliseconds, at most {@link MAX_DURATION_MS}
 * @throws UsageError (`ERR_X_USAGE`) for anything else, and for a duration longer than a Node timer can wait
 *   (about 24.8 days), which would otherwise fire at once
 */
export function parseDurationMs(option: string, text: string): number {
  const match = durationPattern.exec(text.trim());
  if (!match)
    throw new UsageError(
      `${option}: ${JSON.stringify(text)} is not a duration (seconds, optionally with an s, m, h or d suffix, e.g. 30 or 1.5m)`,
    );
  const ms = Number(match[1]) * msPerDurationUnit[match[2]!]!;
  if (!(ms <= MAX_DURATION_MS))
    throw new UsageError(`${option}: ${JSON.stringify(text)} is longer than the longest timer (24.8 days)`);
  return ms;
}

/**
 * Parses a command-line size: bytes (fractions allowed) with an optional `K`, `M` or `G` suffix (×1024ⁿ,
 * case-insensitive, optionally followed by `B` or `iB`): `"4096"`, `"512M"`, `"1.5GiB"`, `"100kb"`. Every `@x`
 * command reads sizes this way.
 *
 * @param option - the flag, for the error (`"--max-memory"`)
 * @param text - the value as typed
 * @returns bytes, rounded down to a whole byte, at most `Number.MAX_SAFE_INTEGER`
 * @throws UsageError (`ERR_X_USAGE`) for anything else, and for a size beyond `Number.MAX_SAFE_INTEGER` bytes
 */
export function parseSizeBytes(option: string, text: string): number {
  const match = sizePattern.exec(text.trim());
  if (!match)
    throw new UsageError(
      `${option}: ${JSON.stringify(text)} is not a size (bytes, optionally with a K, M or G suffix, e.g. 512M)`,
    );
  const bytes = Math.floor(Number(match[1]) * bytesPerSizeUnit[(match[2] ?? "").toLowerCase()]!);
  if (!Number.isSafeInteger(bytes))
    throw new UsageError(`${option}: ${JSON.stringify(text)} is larger than any size a process can have`);
  return bytes;
}
