import type { Readable, Writable } from "node:stream";

/** Copies a piped child stream to ours byte for byte, calling `onChunk` for each chunk; respects backpressure. */
export function copyOutput(from: Readable, to: Writable, onChunk: () => void): Promise<void> {
  return new Promise((resolve) => {
    from.on("data", (chunk: Buffer) => {
      onChunk();
      if (!to.write(chunk)) {
        from.pause();
        to.once("drain", () => from.resume());
      }
    });
    from.once("close", () => resolve());
    from.once("error", () => resolve());
  });
}

/**
 * Waits for the remaining output, but not for ever: a background process may hold the pipes open after the
 * command exited. Gives up after 500 ms without a chunk.
 */
export async function drainOutput(copies: Promise<void>[], streams: Readable[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<void>((resolve) => {
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(resolve, 500);
    };
    arm();
    for (const stream of streams) stream.on("data", arm);
  });
  await Promise.race([Promise.all(copies), idle]);
  clearTimeout(timer);
  for (const stream of streams) stream.destroy();
}
