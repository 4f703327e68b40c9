import { Socket } from "node:net";

/** RabbitMQ as tests and benchmarks reach it: env `AMQP_URL`, default `amqp://guest:guest@127.0.0.1:5672`. */
export const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** PostgreSQL as tests and benchmarks reach it: env `PGURL`, default `postgres://postgres@127.0.0.1:5432/postgres`. */
export const PG_URL = process.env.PGURL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** The port a service URL means when it names none, by scheme. */
const DEFAULT_PORTS: Record<string, number> = {
  "amqp:": 5672,
  "amqps:": 5671,
  "postgres:": 5432,
  "postgresql:": 5432,
};

/**
 * Resolves once a TCP connection to the host and port of `url` opens; otherwise rejects within one
 * second with an error naming the service, its address and `pnpm services` (never skip a test silently).
 *
 * @param name - the service's name for the message, such as `"RabbitMQ"` or `"PostgreSQL"`.
 * @param url - the service's URL, such as {@link AMQP_URL} or {@link PG_URL}.
 */
export async function requireService(name: string, url: string): Promise<void> {
  const { protocol, hostname, port } = new URL(url);
  const target = Number(port || DEFAULT_PORTS[protocol]);
  await new Promise<void>((resolve, reject) => {
    const socket = new Socket();
    const fail = (cause?: unknown) => {
      socket.destroy();
      const message = `${name} is not reachable at ${hostname}:${target}; start it with \`pnpm services\``;
      reject(new Error(message, { cause }));
    };
    socket.setTimeout(1_000, () => fail());
    socket.once("error", fail);
    socket.connect(target, hostname, () => {
      socket.destroy();
      resolve();
    });
  });
}
