import { once } from "node:events";
import { createServer, type Server, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
import { waitFor } from "./wait-for.js";

/** An echo server on a free port of 127.0.0.1. */
async function echoServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    socket.pipe(socket);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `tcp://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** A connection through `proxy` that collects what comes back. */
async function connectThrough(proxy: TcpProxy) {
  const socket = new Socket();
  const received: Buffer[] = [];
  let error: NodeJS.ErrnoException | undefined;
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  socket.on("error", (e) => {
    error = e;
  });
  socket.connect(proxy.port, "127.0.0.1");
  await once(socket, "connect");
  return { socket, text: () => Buffer.concat(received).toString(), error: () => error };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp() {
  const echo = await echoServer();
  cleanups.push(() => new Promise((resolve) => echo.server.close(resolve)));
  const proxy = await startTcpProxy(echo.url);
  cleanups.push(() => proxy.close());
  const link = await connectThrough(proxy);
  cleanups.push(() => link.socket.destroy());
  return { proxy, link };
}

describe("startTcpProxy", () => {
  it("forwards both ways, and delays by the latency it is given, in order", async () => {
    const { proxy, link } = await setUp();
    link.socket.write("a");
    await waitFor(() => link.text() === "a", 5_000, "the echo");
    proxy.shape({ latencyMs: 150, jitterMs: 50 });
    const started = performance.now();
    for (const part of ["b", "c", "d"]) link.socket.write(part);
    await waitFor(() => link.text().length === 4, 5_000, "the delayed echo");
    expect(link.text()).toBe("abcd");
    // Both directions are delayed: at least twice the latency.
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("never reorders chunks under jitter, however they are spread in time", async () => {
    const { proxy, link } = await setUp();
    proxy.shape({ latencyMs: 5, jitterMs: 40 });
    const parts = Array.from({ length: 60 }, (_, i) => `<${i}>`);
    for (const part of parts) {
      link.socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
    }
    const sent = parts.join("");
    await waitFor(() => link.text().length === sent.length, 10_000, "every chunk's echo");
    expect(link.text()).toBe(sent);
  });

  it("limits the bandwidth", async () => {
    const { proxy, link } = await setUp();
    proxy.shape({ bytesPerSecond: 20_000 });
    const started = performance.now();
    link.socket.write(Buffer.alloc(5_000, "x"));
    await waitFor(() => link.text().length === 5_000, 10_000, "the echo");
    // 5 000 bytes at 20 000 B/s each way: at least 250 ms each way.
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
  });

  it("a black hole drops everything without closing, and forwarding resumes when it ends", async () => {
    const { proxy, link } = await setUp();
    proxy.blackHole(true);
    link.socket.write("lost");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(link.text()).toBe("");
    expect(link.socket.destroyed).toBe(false);
    proxy.blackHole(false);
    link.socket.write("back");
    await waitFor(() => link.text() === "back", 5_000, "the echo after the hole");
  });

  it("reset ends connections with a TCP reset; cut with a close; refuse turns new ones away", async () => {
    const { proxy, link } = await setUp();
    proxy.reset();
    await waitFor(() => link.socket.destroyed, 5_000, "the reset");
    expect(link.error()?.code).toBe("ECONNRESET");
    const second = await connectThrough(proxy);
    proxy.cut();
    await once(second.socket, "close");
    expect(second.error()).toBeUndefined();
    proxy.refuse(true);
    const third = await connectThrough(proxy);
    await once(third.socket, "close");
  });
});
