import { createServer, type Socket } from "node:net";
import { AMQP_URL } from "@x/test-support/services";
import amqp from "amqplib";
import { onTestFinished } from "vitest";
import { type FakeErmrest, type FakeErmrestOptions, startFakeErmrest } from "../src/testing/index.js";

/** Starts a fake ERMrest on `tables`, closed when the current test finishes. */
export async function startTestFake(tables: FakeErmrestOptions["tables"]): Promise<FakeErmrest> {
  const fake = await startFakeErmrest({ tables });
  onTestFinished(() => fake.close());
  return fake;
}

/** Deletes an exchange a test declared, ignoring errors. */
export async function deleteExchange(exchange: string): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    await channel.deleteExchange(exchange);
  } catch {
    // Already gone.
  } finally {
    await connection.close().catch(() => {});
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

/**
 * A TCP server on 127.0.0.1 that accepts connections and never answers: a broker that black-holes packets, so
 * an AMQP handshake hangs until its timeout. Closed, with its sockets, when the current test finishes.
 */
export async function silentServer(): Promise<{ port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
  return { port: (silent.address() as { port: number }).port, sockets };
}
