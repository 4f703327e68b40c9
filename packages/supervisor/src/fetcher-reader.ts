import { closeSync, fstatSync, readSync } from "node:fs";
import { type LineRejectReason, maxLineBytes, parseFetcherLine, sampleBytes } from "./fetcher-line.js";

/** A skipped line: why, and a printable sample of its start. */
export interface RejectedLine {
  reason: LineRejectReason;
  sample: string;
}

/** Lines read by one {@link FetcherReader.readBatch} call, in file order. */
export interface LineBatch {
  entries: Array<[attrPath: string, payload: string]>;
  rejected: RejectedLine[];
  /** `true` when the read reached the end of the data available now. */
  eof: boolean;
}

const chunkBytes = 65_536;

/**
 * Reads a fetcher file incrementally through an open descriptor, synchronously, in bounded batches. Only
 * `\n`-terminated lines are consumed; an unterminated tail is kept (at most 1 MiB) until its `\n` arrives or
 * the file is declared complete. A line over 1 MiB is discarded as it streams by, never buffered whole.
 */
export class FetcherReader {
  /** The open file descriptor (closed by {@link close}). */
  readonly fd: number;
  /** The file's inode when it was opened: it identifies the file across renames. */
  readonly ino: number;
  /** Bytes read from the file so far, including the buffered tail. */
  position = 0;
  #chunk = Buffer.allocUnsafe(chunkBytes);
  #tail: Buffer[] = [];
  #tailLength = 0;
  /** A sample of the too-long line being skipped, or `undefined` when not skipping. */
  #skipping: string | undefined;
  #closed = false;

  /**
   * @param fd - a descriptor opened for reading; the reader owns it from now on
   */
  constructor(fd: number) {
    this.fd = fd;
    this.ino = fstatSync(fd).ino;
  }

  /** The file's current size, in bytes (one `fstat`). */
  size(): number {
    return fstatSync(this.fd).size;
  }

  /** Starts again from byte 0, forgetting the buffered tail (for a file that shrank below {@link position}). */
  rewind(): void {
    this.position = 0;
    this.#tail = [];
    this.#tailLength = 0;
    this.#skipping = undefined;
  }

  /**
   * Reads whole chunks until at least `maxLines` lines are parsed or the end of the data is reached.
   *
   * @param maxLines - lines after which the batch stops (it may exceed it by one chunk's lines)
   * @param final - at the end, treat the unterminated tail as a last line (a complete file)
   */
  readBatch(maxLines: number, final: boolean): LineBatch {
    const batch: LineBatch = { entries: [], rejected: [], eof: false };
    while (batch.entries.length + batch.rejected.length < maxLines) {
      const n = readSync(this.fd, this.#chunk, 0, chunkBytes, this.position);
      if (n === 0) {
        batch.eof = true;
        if (final) this.#flushTail(batch);
        break;
      }
      this.position += n;
      this.#scan(this.#chunk.subarray(0, n), batch);
    }
    return batch;
  }

  /** Closes the descriptor; idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.fd);
  }

  #scan(data: Buffer, batch: LineBatch): void {
    let start = 0;
    for (;;) {
      const newline = data.indexOf(10, start);
      if (newline < 0) {
        this.#keep(data.subarray(start));
        return;
      }
      this.#line(data.subarray(start, newline), batch);
      start = newline + 1;
    }
  }

  #keep(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#skipping !== undefined) return;
    if (this.#tailLength + part.length > maxLineBytes) {
      this.#skipping = sampleBytes(this.#tail[0] ?? part);
      this.#tail = [];
      this.#tailLength = 0;
      return;
    }
    this.#tail.push(Buffer.from(part));
    this.#tailLength += part.length;
  }

  #line(end: Buffer, batch: LineBatch): void {
    if (this.#skipping !== undefined) {
      batch.rejected.push({ reason: "too-long", sample: this.#skipping });
      this.#skipping = undefined;
      return;
    }
    const line = this.#tailLength === 0 ? end : Buffer.concat([...this.#tail, end]);
    this.#tail = [];
    this.#tailLength = 0;
    const parsed = parseFetcherLine(line);
    if ("entry" in parsed) batch.entries.push(parsed.entry);
    else batch.rejected.push({ reason: parsed.reject, sample: sampleBytes(line) });
  }

  #flushTail(batch: LineBatch): void {
    if (this.#skipping === undefined && this.#tailLength === 0) return;
    this.#line(Buffer.alloc(0), batch);
  }
}
