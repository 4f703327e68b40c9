import type { Path } from "./types.js";

/** A `Buffer` view of the same bytes, without copying. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Orders byte strings: unsigned bytes, a shorter prefix first. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(asBuffer(a), asBuffer(b));
}

/** Orders `null` first, then by bytes. */
export function compareNullableBytes(a: Uint8Array | null, b: Uint8Array | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  return compareBytes(a, b);
}

/** A string that is equal for equal byte strings, for use as a `Map`/`Set` key. */
export function bytesKey(bytes: Uint8Array | null): string {
  return bytes === null ? "\u0100" : asBuffer(bytes).toString("latin1");
}

/** The SHA-1 of a path, in hex: the id a location is routed by. */
export function pathId(path: Path): string {
  // node:crypto from getBuiltinModule, not an import: its ESM import costs the package import time (#31)
  return process.getBuiltinModule("node:crypto").createHash("sha1").update(path).digest("hex");
}

/** A fresh copy of a path that the caller may keep. */
export function copyPath(path: Uint8Array): Uint8Array {
  return Buffer.from(path);
}

/** The path of a content found through a directory: the content path alone when the directory path is empty or `.`. */
export function joinPath(dirPath: Uint8Array, cntPath: Uint8Array): Buffer {
  if (dirPath.length === 0 || (dirPath.length === 1 && dirPath[0] === 0x2e)) return Buffer.from(cntPath);
  return Buffer.concat([dirPath, Buffer.of(0x2f), cntPath]);
}
