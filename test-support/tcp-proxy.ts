import { createServer, Socket } from "node:net";

/** A local TCP proxy to a service, whose connections a test can cut or refuse (a real network failure). */
export interface TcpProxy {
  /** The target URL with its host and port replaced by the proxy's (`127.0.0.1:<port>`). */
  readonly url: string;
  /** The local port the proxy listens on. */
  readonly port: number;
  /** Destroys every open connection, both sides; new connections are still accepted. */
  cut(): void;
  /** While `refusing` is true, each new connection is closed as soon as it is accepted. */
  refuse(refusing: boolean): void;
  /** Destroys every open connection and stops listening (the port then refuses connections). */
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free port of 127.0.0.1 that forwards each connection to the host and port of
 * `target` (a URL such as `amqp://guest:guest@127.0.0.1:5672`; the port defaults to 5672).
 */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let refusing = false;
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
    service.connect(Number(upstream.port || 5672), upstream.hostname, () => {
      client.pipe(service);
      service.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  const cut = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  return {
    url: url.href,
    port,
    cut,
    refuse: (on) => {
      refusing = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
