import { createServer, type Socket } from "node:net";

/** One request as a raw server received it. */
export interface RawRequest {
  /** The request line and headers, bytes as sent, up to the blank line. */
  head: Buffer;
  /** A header's value bytes as sent (the first with that name, any case), or `undefined`. */
  header(name: string): Buffer | undefined;
}

/**
 * A TCP server on 127.0.0.1 that reads each HTTP request (head and `Content-Length` body) and writes back the
 * bytes `answer()` gives, verbatim, then closes the connection: for answers no HTTP library would send. Closed,
 * with its sockets, by `close()` or `await using`.
 */
export async function startRawServer(answer: (request: RawRequest) => Uint8Array) {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buffered.subarray(0, end);
      const request = { head, header: (name: string) => headerBytes(head, name) };
      const length = Number(request.header("content-length")?.toString("latin1") ?? 0);
      if (buffered.length < end + 4 + length) return;
      socket.off("data", onData);
      requests.push(request);
      socket.end(answer(request));
    };
    socket.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return {
    server: `127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function headerBytes(head: Buffer, name: string): Buffer | undefined {
  let start = head.indexOf("\r\n") + 2;
  while (start > 1 && start < head.length) {
    const next = head.indexOf("\r\n", start);
    const line = head.subarray(start, next === -1 ? head.length : next);
    const colon = line.indexOf(":");
    if (colon > 0 && line.subarray(0, colon).toString("latin1").toLowerCase() === name.toLowerCase()) {
      let from = colon + 1;
      let to = line.length;
      while (from < to && (line[from] === 0x20 || line[from] === 0x09)) from++;
      while (to > from && (line[to - 1] === 0x20 || line[to - 1] === 0x09)) to--;
      return line.subarray(from, to);
    }
    if (next === -1) break;
    start = next + 2;
  }
  return undefined;
}
