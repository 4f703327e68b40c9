import { GuardError, GuardErrorCode } from "./errors.js";

const sizePattern = /^(\d+(?:\.\d*)?|\.\d+)(?:([kmg])(?:i?b)?|b)?$/i;
const durationPattern = /^(\d+(?:\.\d*)?|\.\d+)([smhd])?$/;
const sizeFactor: Record<string, number> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
const durationFactor: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

function invalid(what: string, text: string, expected: string): GuardError {
  return new GuardError(
    GuardErrorCode.OPTIONS,
    `invalid ${what}: ${JSON.stringify(text)} (expected ${expected})`,
  );
}

/**
 * Parses a memory size as the command line writes it: a number of bytes with an optional `K`, `M` or `G`
 * suffix (×1024ⁿ, case-insensitive, optionally followed by `B` or `iB`); fractions allowed.
 * `"512M"`, `"1.5GiB"`, `"100kb"`, `"4096"`.
 *
 * @returns bytes (rounded down to a whole byte)
 * @throws GuardError `ERR_X_GUARD_OPTIONS` for anything else
 */
export function parseSize(text: string): number {
  const match = sizePattern.exec(text.trim());
  if (!match) throw invalid("size", text, "bytes with an optional K, M or G suffix, e.g. 512M");
  const factor = match[2] ? sizeFactor[match[2].toLowerCase()]! : 1;
  return Math.floor(Number(match[1]) * factor);
}

/**
 * Parses a duration as `timeout(1)` does: seconds (fractions allowed) with an optional `s`, `m`, `h` or `d`
 * suffix. `"10"`, `"0.5"`, `"2m"`, `"1.5h"`.
 *
 * @returns seconds
 * @throws GuardError `ERR_X_GUARD_OPTIONS` for anything else
 */
export function parseDuration(text: string): number {
  const match = durationPattern.exec(text.trim());
  if (!match)
    throw invalid("duration", text, "seconds with an optional s, m, h or d suffix, e.g. 30 or 1.5m");
  return Number(match[1]) * durationFactor[match[2] ?? "s"]!;
}
