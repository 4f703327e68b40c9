import { randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import amqp from "amqplib";

/** The broker the tests use. */
export const amqpUrl = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** A name no other test run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

/** Fails within a second, naming `pnpm services`, when RabbitMQ is unreachable. */
export async function requireBroker(): Promise<void> {
  try {
    const connection = await amqp.connect(amqpUrl, { timeout: 1_000 });
    await connection.close();
  } catch (cause) {
    throw new Error(`RabbitMQ is not reachable at ${amqpUrl}: start it with \`pnpm services\``, { cause });
  }
}

/** Deletes an exchange a test declared, ignoring errors. */
export async function deleteExchange(exchange: string): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createChannel();
    await channel.deleteExchange(exchange);
  } catch {
    // Already gone.
  } finally {
    await connection.close().catch(() => {});
  }
}

/** Polls `condition` every 10 ms until it is truthy, or fails after `timeoutMs`. */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A local TCP port with nothing listening on it (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A TCP proxy to the broker on a local port: `cut()` destroys every live connection (a network failure),
 * `refuse(true)` makes new ones fail at once.
 */
export class BrokerProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #refusing = false;
  port = 0;

  constructor(target = new URL(amqpUrl)) {
    this.#server = createServer((client) => {
      if (this.#refusing) {
        client.destroy();
        return;
      }
      this.#pipe(client, target);
    });
  }

  #pipe(client: Socket, target: URL): void {
    const upstream = connect(Number(target.port || 5672), target.hostname);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        this.#sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** The AMQP URL through the proxy. */
  get url(): string {
    const url = new URL(amqpUrl);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.href;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.port = (this.#server.address() as { port: number }).port;
    return this;
  }

  refuse(refusing: boolean): void {
    this.#refusing = refusing;
  }

  cut(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** A logger that keeps every record, for assertions on log lines. */
export function recordingLogger() {
  const records: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const method =
    (level: string) =>
    (first: object | string, msg?: string): void => {
      if (typeof first === "string") records.push({ level, fields: {}, msg: first });
      else records.push({ level, fields: first as Record<string, unknown>, msg: msg ?? "" });
    };
  return {
    records,
    logger: { debug: method("debug"), info: method("info"), warn: method("warn"), error: method("error") },
    messages: (level?: string) =>
      records.filter((r) => level === undefined || r.level === level).map((r) => r.msg),
  };
}

/** A fetch that records the URL and headers of every attempt, then calls the global fetch. */
export function recordingFetch() {
  const calls: Array<{ url: string; method: string; headers: Headers; body: unknown }> = [];
  const fetchFn = (input: string, init: RequestInit) => {
    calls.push({
      url: input,
      method: init.method ?? "GET",
      headers: new Headers(init.headers),
      body: init.body,
    });
    return fetch(input, init);
  };
  return { calls, fetch: fetchFn };
}
