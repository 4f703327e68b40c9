import { connect, type Socket } from "node:net";

/** What {@link tcpFlood} opens, and for how long. */
export interface TcpFloodOptions {
  /** The port on 127.0.0.1 to flood (never another address). */
  port: number;
  /** Connections to open in all. */
  total: number;
  /** Connections open at once, at most: keep it under this process's own descriptor limit. */
  concurrency: number;
  /** How long one connection is kept open when the server does not close it first, in ms. */
  holdMs: number;
  /** No connection is opened after this long, in ms; the open ones are closed when their hold ends. */
  deadlineMs: number;
}

/** What {@link tcpFlood} did. */
export interface TcpFloodResult {
  /** Connections attempted. */
  opened: number;
  /** Of those, connections the kernel completed (the client's `connect` event). */
  connected: number;
  /** How long the flood took, in ms. */
  elapsedMs: number;
}

/**
 * Opens `total` TCP connections to `127.0.0.1:port` that never send a byte, as a client that starts a TLS
 * handshake and never finishes it looks to a server: at most `concurrency` at once, each kept until the server
 * closes it or `holdMs` passes, the next one opened as soon as one closes. Resolves once every connection is
 * closed.
 */
export function tcpFlood({
  port,
  total,
  concurrency,
  holdMs,
  deadlineMs,
}: TcpFloodOptions): Promise<TcpFloodResult> {
  const started = Date.now();
  const result = { opened: 0, connected: 0, elapsedMs: 0 };
  let open = 0;
  return new Promise((resolve) => {
    const next = () => {
      if (result.opened >= total || Date.now() - started > deadlineMs) {
        if (open === 0) resolve({ ...result, elapsedMs: Date.now() - started });
        return;
      }
      result.opened++;
      open++;
      const socket: Socket = connect({ host: "127.0.0.1", port });
      const timer = setTimeout(() => socket.destroy(), holdMs);
      socket.on("connect", () => result.connected++);
      socket.on("error", () => {});
      socket.resume();
      socket.on("close", () => {
        clearTimeout(timer);
        open--;
        next();
      });
    };
    for (let i = 0; i < concurrency; i++) next();
  });
}
