import { isUtf8 } from "node:buffer";

/** Longest fetcher line accepted, in bytes before its `\n` (1 MiB). */
export const maxLineBytes = 1_048_576;

/** Why a fetcher line was skipped. */
export type LineRejectReason = "no-space" | "too-long" | "bad-utf8" | "bad-cr";

/** A parsed fetcher line, or the reason it was skipped. */
export type ParsedLine = { entry: [attrPath: string, payload: string] } | { reject: LineRejectReason };

/**
 * Parses one fetcher line (the bytes before `\n`): UTF-8, trimmed as `String.prototype.trim` does, then split
 * at the first space into attr path and payload.
 *
 * @param line - the line's bytes, without the `\n`
 */
export function parseFetcherLine(line: Uint8Array): ParsedLine {
  if (line.length > maxLineBytes) return { reject: "too-long" };
  if (!isUtf8(line)) return { reject: "bad-utf8" };
  const text = Buffer.from(line.buffer, line.byteOffset, line.length).toString("utf8").trim();
  if (text.includes("\r")) return { reject: "bad-cr" };
  const space = text.indexOf(" ");
  if (space < 0) return { reject: "no-space" };
  return { entry: [text.slice(0, space), text.slice(space + 1)] };
}

/**
 * A printable sample of a byte string for logs: its first `max` bytes, with printable ASCII kept and every
 * other byte (and the backslash) written `\xNN`, followed by `…` when cut.
 */
export function sampleBytes(bytes: Uint8Array, max = 200): string {
  let text = "";
  const end = Math.min(bytes.length, max);
  for (let i = 0; i < end; i++) {
    const byte = bytes[i]!;
    text +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return bytes.length > max ? `${text}…` : text;
}
