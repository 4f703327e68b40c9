// Node creates process.stdout and process.stderr on first use, and creating one costs a few ms of a command's
// start (a pipe becomes a net.Socket, a terminal a tty.WriteStream, each loading its modules). A command that
// only prints its --help, or runs a child that inherits the descriptors, need never create them: the helpers
// here listen to the streams' errors without creating them, and write short answers straight to the
// descriptor. Measured in docs/benchmarks/startup.md.

/** One of the two output streams of the process. */
type StdioName = "stdout" | "stderr";

type ErrorHandler = (error: NodeJS.ErrnoException) => void;

const stdioNames: readonly StdioName[] = ["stdout", "stderr"];
const handlers = new Set<ErrorHandler>();
const watched = new Set<StdioName>();
/** Streams whose getter is still wrapped by {@link watch}: nothing has read them since. */
const unread = new Set<StdioName>();

/** Passes a stream's error to every handler; with none, it is thrown, as an `error` nobody listens to is. */
function dispatch(error: NodeJS.ErrnoException): void {
  if (handlers.size === 0) throw error;
  for (const handler of [...handlers]) handler(error);
}

/**
 * Listens to `error` on the stream once it exists: at once if Node's lazy getter is missing (another
 * runtime), else by wrapping the getter so that the stream's first reader attaches the listener. A stream
 * created before this call gets its listener at its next read through `process[name]`.
 */
function watch(name: StdioName): void {
  if (watched.has(name)) return;
  watched.add(name);
  const own = Object.getOwnPropertyDescriptor(process, name);
  const get = own?.get;
  if (own === undefined || get === undefined || own.configurable !== true) {
    process[name].on("error", dispatch);
    return;
  }
  unread.add(name);
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: own.enumerable,
    get() {
      const stream = get.call(process) as NodeJS.WriteStream;
      Object.defineProperty(process, name, own);
      unread.delete(name);
      stream.on("error", dispatch);
      return stream;
    },
  });
}

/**
 * Calls `handler` with every error of stdout or stderr (an `EPIPE` once the reader is gone), without
 * creating either stream before something writes to it.
 *
 * @returns a function that removes the handler
 */
export function onStdioError(handler: ErrorHandler): () => void {
  for (const name of stdioNames) watch(name);
  handlers.add(handler);
  return () => {
    handlers.delete(handler);
  };
}

/**
 * Writes `text` to stdout: straight to the descriptor, without creating `process.stdout`, when nothing has
 * read `process.stdout` since {@link onStdioError} began to watch it (a command's first words: `--help`,
 * `--version`); through `process.stdout` otherwise, so that it keeps its place after what was written there
 * (and a test's spy on `process.stdout.write` sees it). What the descriptor does not take at once (a full,
 * non-blocking pipe) or cannot take (the reader is gone) goes through `process.stdout` too, so that it is
 * written later, or its error reaches the handlers of {@link onStdioError}, as any write of the command's.
 */
export function writeStdout(text: string): void {
  if (!unread.has("stdout")) {
    process.stdout.write(text);
    return;
  }
  const fs = process.getBuiltinModule("node:fs");
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += fs.writeSync(1, bytes, written);
  } catch {
    process.stdout.write(bytes.subarray(written));
  }
}
