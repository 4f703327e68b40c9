import { Socket } from "node:net";

/** RabbitMQ, as the tests and the benchmark reach it. */
export const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
/** PostgreSQL, as the tests and the benchmark reach it. */
export const PG_URL = process.env.PGURL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** Fails within a second, naming `pnpm services`, when a service's port does not answer. */
export async function requireService(name: string, url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const defaultPort = url.startsWith("amqp") ? 5672 : 5432;
  await new Promise<void>((resolve, reject) => {
    const socket = new Socket();
    const fail = () => {
      socket.destroy();
      reject(
        new Error(
          `${name} is not reachable at ${hostname}:${port || defaultPort}; start it with \`pnpm services\``,
        ),
      );
    };
    socket.setTimeout(1_000, fail);
    socket.once("error", fail);
    socket.connect(Number(port || defaultPort), hostname, () => {
      socket.destroy();
      resolve();
    });
  });
}

/** A name unique to this run, for schemas, exchanges and queues. */
export function uniqueName(tag: string): string {
  return `t_${tag}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
}
