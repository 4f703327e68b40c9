import { createServer, Socket } from "node:net";

/** How a {@link TcpProxy} shapes the bytes it forwards, in each direction; every field defaults to 0 (none). */
export interface LinkShape {
  /** Added to every chunk's delivery, in ms. */
  latencyMs?: number;
  /** A random extra delay of 0…`jitterMs` per chunk, in ms; chunks still arrive in order, as over TCP. */
  jitterMs?: number;
  /** The most bytes per second forwarded in each direction of each connection; 0: unlimited. */
  bytesPerSecond?: number;
}

/** A local TCP proxy to a service, whose connections a test can cut, refuse, slow down or black-hole (a real network failure). */
export interface TcpProxy {
  /** The target URL with its host and port replaced by the proxy's (`127.0.0.1:<port>` unless `host` was given). */
  readonly url: string;
  /** The local port the proxy listens on. */
  readonly port: number;
  /** Destroys every open connection, both sides; new connections are still accepted. */
  cut(): void;
  /** Like {@link cut}, but each side gets a TCP reset (RST) rather than an orderly close (FIN). */
  reset(): void;
  /** While `refusing` is true, each new connection is closed as soon as it is accepted. */
  refuse(refusing: boolean): void;
  /**
   * While `on` is true, every byte in either direction is dropped without a word and new connections are
   * accepted but never reach the service, as when a link goes down: peers notice only through their own
   * timeouts and heartbeats. Connections resume forwarding (what arrives from then on) when it ends.
   */
  blackHole(on: boolean): void;
  /** Applies latency, jitter and a bandwidth limit to everything forwarded from now on (`{}` removes them). */
  shape(shape: LinkShape): void;
  /** Destroys every open connection and stops listening (the port then refuses connections). */
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free port of 127.0.0.1 (or of `options.host`, e.g. the host's end of a network
 * namespace's link) that forwards each connection to the host and port of `target` (a URL such as
 * `amqp://guest:guest@127.0.0.1:5672`; the port defaults to 5672).
 */
export async function startTcpProxy(target: string, options: { host?: string } = {}): Promise<TcpProxy> {
  const host = options.host ?? "127.0.0.1";
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let refusing = false;
  let dropping = false;
  let shape: Required<LinkShape> = { latencyMs: 0, jitterMs: 0, bytesPerSecond: 0 };

  /** Forwards `from` to `to`, shaped, dropping what arrives while black-holed; honours back-pressure. */
  const forward = (from: Socket, to: Socket) => {
    /** Chunks waiting for their delivery time, in arrival order; delivered strictly from the head. */
    const queue: Array<{ chunk: Buffer; due: number }> = [];
    let timer: NodeJS.Timeout | undefined;
    const deliverDue = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.due <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
      // One timer per direction, set for the head: a later chunk can never overtake an earlier one.
      if (queue.length > 0) timer = setTimeout(deliverDue, Math.max(1, queue[0]!.due - Date.now()));
    };
    from.on("close", () => clearTimeout(timer));
    from.on("data", (chunk: Buffer) => {
      if (dropping) return;
      const { latencyMs, jitterMs, bytesPerSecond } = shape;
      if (latencyMs === 0 && jitterMs === 0 && bytesPerSecond === 0 && queue.length === 0) {
        if (!to.write(chunk)) {
          from.pause();
          to.once("drain", () => from.resume());
        }
        return;
      }
      const transmitMs = bytesPerSecond > 0 ? (chunk.length / bytesPerSecond) * 1_000 : 0;
      const lastDue = queue.at(-1)?.due ?? 0;
      queue.push({
        chunk,
        due: Math.max(lastDue, Date.now() + latencyMs + Math.random() * jitterMs) + transmitMs,
      });
      timer ??= setTimeout(deliverDue, Math.max(1, queue[0]!.due - Date.now()));
    });
  };

  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const service = new Socket();
    const drop = () => {
      for (const socket of [client, service]) {
        socket.destroy();
        sockets.delete(socket);
      }
    };
    for (const socket of [client, service]) {
      sockets.add(socket);
      socket.on("error", drop).on("close", drop);
    }
    if (dropping) client.on("data", () => {});
    const connect = () =>
      service.connect(Number(upstream.port || 5672), upstream.hostname, () => {
        forward(client, service);
        forward(service, client);
      });
    // A connection accepted inside a black hole reaches the service only once the hole closes.
    if (dropping) holeClosed.push(connect);
    else connect();
  });
  let holeClosed: Array<() => void> = [];
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = host;
  url.port = String(port);
  const end = (how: (socket: Socket) => void) => {
    for (const socket of sockets) how(socket);
    sockets.clear();
  };
  return {
    url: url.href,
    port,
    cut: () => end((socket) => socket.destroy()),
    reset: () => end((socket) => socket.resetAndDestroy()),
    refuse: (on) => {
      refusing = on;
    },
    blackHole: (on) => {
      dropping = on;
      if (on) return;
      const waiting = holeClosed;
      holeClosed = [];
      for (const connect of waiting) connect();
    },
    shape: (next) => {
      shape = { latencyMs: 0, jitterMs: 0, bytesPerSecond: 0, ...next };
    },
    close: () =>
      new Promise<void>((resolve) => {
        end((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}
