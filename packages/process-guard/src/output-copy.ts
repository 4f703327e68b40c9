import type { Readable, Writable } from "node:stream";

/**
 * Copies a piped child stream to ours byte for byte, calling `onChunk` for each chunk; respects backpressure.
 *
 * When `to` fails (its reader went away: EPIPE), the chunk that found it broken is one the child wrote after
 * its reader had gone, so `onBroken` is called (the caller sends SIGPIPE, as the kernel would have through a
 * plain pipe), and the copy stops and closes our end of the child's pipe. The error is handled here: it never
 * becomes an uncaught exception.
 */
export function copyOutput(
  from: Readable,
  to: Writable,
  onChunk: () => void,
  onBroken: () => void,
): Promise<void> {
  return new Promise((resolve) => {
    let broken = false;
    const resume = () => from.resume();
    const finish = () => {
      to.off("drain", resume);
      // once `to` has failed, our listener stays: process.stdout can report more than one failed write, and
      // an error with no listener would be an uncaught exception
      if (!broken) to.off("error", stop);
      resolve();
    };
    const stop = () => {
      if (broken) return;
      broken = true;
      finish();
      onBroken();
      from.destroy();
    };
    to.on("error", stop);
    from.on("data", (chunk: Buffer) => {
      if (broken) return; // what the source still had buffered when it was destroyed
      onChunk();
      if (to.destroyed || to.errored) {
        stop(); // it broke before this copy listened
        return;
      }
      if (!to.write(chunk)) {
        from.pause();
        to.once("drain", resume);
      }
    });
    from.once("close", finish);
    from.once("error", finish);
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
