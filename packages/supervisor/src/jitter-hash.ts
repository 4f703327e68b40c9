/** MD5's per-step left rotations (RFC 1321), four per round. */
const rotations = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
/** MD5's per-step constants: the integer part of 2³² × |sin(i + 1)| (RFC 1321). */
const constants = Int32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32));
/** One block's sixteen message words. */
const words = new Int32Array(16);
const encoder = new TextEncoder();
/** The message with its padding, reused; grown when a longer one comes. */
let buffer = new Uint8Array(128);

/**
 * The queue's stable pseudo-random order key: the first four bytes of the MD5 digest of the UTF-8 bytes of `s`,
 * read as a little-endian signed 32-bit integer. `jitterHash("a") === -1183465204`.
 *
 * The value is stored in `queue.order_jitter`; it must never change, or the stored order would be wrong. MD5 is
 * computed here in JavaScript: for the short strings that attribute paths are it is several times faster than a
 * call into `node:crypto`, and a queue of 100 000 lines takes 100 000 of them.
 *
 * @param s - an attribute path
 */
export function jitterHash(s: string): number {
  const length = encode(s);
  // padding: 0x80, zeros up to 8 bytes short of a block, then the length in bits, 64-bit little-endian
  const total = (((length + 8) >>> 6) + 1) << 6;
  buffer.fill(0, length, total);
  buffer[length] = 0x80;
  const bits = length * 8;
  for (let i = 0; i < 4; i++) buffer[total - 8 + i] = (bits >>> (8 * i)) & 0xff;
  buffer[total - 4] = Math.floor(bits / 2 ** 32) & 0xff;
  let a0 = 0x67452301;
  let b0 = 0xefcdab89 | 0;
  let c0 = 0x98badcfe | 0;
  let d0 = 0x10325476;
  for (let offset = 0; offset < total; offset += 64) {
    for (let j = 0; j < 16; j++) {
      const o = offset + 4 * j;
      words[j] = buffer[o]! | (buffer[o + 1]! << 8) | (buffer[o + 2]! << 16) | (buffer[o + 3]! << 24);
    }
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const sum = (a + f + constants[i]! + words[g]!) | 0;
      const r = rotations[((i >>> 4) << 2) | (i & 3)]!;
      a = d;
      d = c;
      c = b;
      b = (b + ((sum << r) | (sum >>> (32 - r)))) | 0;
    }
    a0 = (a0 + a) | 0;
    b0 = (b0 + b) | 0;
    c0 = (c0 + c) | 0;
    d0 = (d0 + d) | 0;
  }
  return a0; // the digest's first four bytes, little-endian, signed
}

/** Writes the UTF-8 bytes of `s` at the start of {@link buffer} (with room for the padding); their count. */
function encode(s: string): number {
  if (buffer.length < s.length * 3 + 72) buffer = new Uint8Array(s.length * 3 + 72);
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code >= 0x80) return encoder.encodeInto(s, buffer).written; // not ASCII: the encoder's way
    buffer[i] = code;
  }
  return s.length;
}
