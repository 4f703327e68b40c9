import { UsageError } from "@x/core";

const durationUnits: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86_400 };
const sizeUnits: Record<string, number> = { "": 1, k: 1, m: 1024, g: 1024 * 1024 };

/**
 * Parses a `timeout(1)`-style duration: a number of seconds with an optional `s`, `m`, `h` or `d` suffix
 * (`90`, `1.5m`, `6h`).
 *
 * @param option - the option's name, for the error
 * @param text - the value
 * @returns seconds
 */
export function parseDuration(option: string, text: string): number {
  const match = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(text.trim());
  if (!match)
    throw new UsageError(`${option}: ${JSON.stringify(text)} is not a duration (seconds, or with s/m/h/d)`);
  return Number(match[1]) * durationUnits[match[2]!]!;
}

/**
 * Parses a memory size in KiB, with an optional `K`, `M` or `G` suffix (case-insensitive, optionally followed
 * by `B` or `iB`): `512000`, `500M`, `2G`.
 *
 * @param option - the option's name, for the error
 * @param text - the value
 * @returns KiB
 */
export function parseKiB(option: string, text: string): number {
  const match = /^(\d+(?:\.\d*)?|\.\d+)(?:([kmg])(?:i?b)?)?$/i.exec(text.trim());
  if (!match) throw new UsageError(`${option}: ${JSON.stringify(text)} is not a size (KiB, or with K/M/G)`);
  return Number(match[1]) * sizeUnits[(match[2] ?? "").toLowerCase()]!;
}
