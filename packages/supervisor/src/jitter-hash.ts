import { hash } from "node:crypto";

/**
 * The queue's stable pseudo-random order key: the first four bytes of the MD5 digest of the UTF-8 bytes of `s`,
 * read as a little-endian signed 32-bit integer. `jitterHash("a") === -1183465204`.
 *
 * The value is stored in `queue.order_jitter`; it must never change, or the stored order would be wrong.
 *
 * @param s - an attribute path
 */
export function jitterHash(s: string): number {
  return hash("md5", s, "buffer").readInt32LE(0);
}
