import { createServer, type Server, Socket } from "node:net";

/** A TCP proxy to the broker whose connections a test can cut, to lose a connection for real. */
export interface TcpProxy {
  /** An AMQP URL that goes through the proxy. */
  url: string;
  /** Destroys every open connection (new ones are still accepted). */
  cut(): void;
  close(): Promise<void>;
}

/** Starts a proxy on a free local port to `target` (an amqp:// URL). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const broker = new Socket();
    sockets.add(client);
    sockets.add(broker);
    const drop = () => {
      client.destroy();
      broker.destroy();
      sockets.delete(client);
      sockets.delete(broker);
    };
    client.on("error", drop).on("close", drop);
    broker.on("error", drop).on("close", drop);
    broker.connect(Number(upstream.port || 5672), upstream.hostname, () => {
      client.pipe(broker);
      broker.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    cut: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
