import { request } from "node:http";
import { requestWithHost } from "@x/test-support/http-host";
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "./logger.js";
import { type HttpRoutes, ReadOnlyHttpServer, textAnswer } from "./read-only-http.js";

const errors: unknown[] = [];
const logger: Logger = { debug() {}, info() {}, warn() {}, error: (fields) => errors.push(fields) };
const servers: ReadOnlyHttpServer[] = [];

async function serve(routes: HttpRoutes, allowedHosts?: string[]): Promise<string> {
  const server = new ReadOnlyHttpServer(
    { host: "127.0.0.1", port: 0, ...(allowedHosts === undefined ? {} : { allowedHosts }) },
    routes,
    logger,
  );
  servers.push(server);
  await server.listen();
  return `http://127.0.0.1:${server.address().port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  errors.length = 0;
});

describe("ReadOnlyHttpServer", () => {
  const routes: HttpRoutes = (url) =>
    url.pathname === "/hello"
      ? { type: "text/plain", body: `hello ${url.searchParams.get("name")}\n`, headers: { "x-extra": "1" } }
      : textAnswer(404, "not found\n");

  it("answers GET from its routes, uncached, with the route's headers", async () => {
    const response = await fetch(`${await serve(routes)}/hello?name=you`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-extra")).toBe("1");
    expect(await response.text()).toBe("hello you\n");
    expect((await fetch(`${await serve(routes)}/other`)).status).toBe(404);
  });

  it("answers HEAD without a body, and refuses other methods with 405", async () => {
    const base = await serve(routes);
    const head = await fetch(`${base}/hello`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await fetch(`${base}/hello`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answers 421 to a Host it does not serve (DNS rebinding), and its routes to the ones it does", async () => {
    const base = await serve(routes, ["queue.example.org"]);
    const { port } = new URL(base);
    const status = async (host: string) => (await requestWithHost(`${base}/hello?name=you`, host)).status;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `queue.example.org:${port}`,
      "queue.example.org",
    ]) {
      expect(await status(host), host).toBe(200);
    }
    for (const host of [`attacker.example:${port}`, `127.0.0.1.nip.io:${port}`, `example.org:${port}`]) {
      const response = await requestWithHost(`${base}/hello?name=you`, host);
      expect(response.status, host).toBe(421);
      expect(response.body).toBe("misdirected request: this server does not answer for that host name\n");
    }
    // whatever the method: the check comes first
    expect((await requestWithHost(`${base}/hello`, "attacker.example", "POST")).status).toBe(421);
  });

  it("answers 500 and logs when a route fails, and keeps serving", async () => {
    let calls = 0;
    const base = await serve(() => {
      calls++;
      if (calls === 1) throw new Error("boom");
      return textAnswer(200, "fine\n");
    });
    const failed = await fetch(`${base}/`);
    expect(failed.status).toBe(500);
    expect(errors).toEqual([
      expect.objectContaining({ url: "/", err: expect.objectContaining({ message: "boom" }) }),
    ]);
    expect(await (await fetch(`${base}/`)).text()).toBe("fine\n");
  });

  it("reports the port it got, refuses a port in use, and closes open connections", async () => {
    const base = await serve(routes);
    const { port } = servers[0]!.address();
    expect(base).toBe(`http://127.0.0.1:${port}`);
    const second = new ReadOnlyHttpServer({ host: "127.0.0.1", port }, routes, logger);
    await expect(second.listen()).rejects.toMatchObject({ code: "EADDRINUSE" });
    // A keep-alive connection left open does not hold close() up.
    await new Promise<void>((resolve) =>
      request(`${base}/hello`, { agent: false, headers: { connection: "keep-alive" } }, (response) => {
        response.resume();
        response.once("end", resolve);
      }).end(),
    );
    await servers[0]!.close();
    await servers[0]!.close();
    await expect(fetch(`${base}/hello`)).rejects.toThrow();
  });
});
