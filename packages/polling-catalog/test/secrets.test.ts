import { inspect } from "node:util";
import { XError } from "@x/core";
import { recordingLogger } from "@x/test-support/recording-logger";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  CatalogResponse,
  ErmrestCatalog,
  HTTPError,
  PollingErmrestCatalog,
  type PollingErmrestCatalogOptions,
} from "../src/index.js";
import { startFakeErmrest } from "../src/testing/index.js";
import { closedPort } from "./helpers.js";
import { expectNoSecret, secrets } from "./secrets.js";
import { startStubServer } from "./stub-server.js";

const credentials = { cookie: secrets.cookie, bearerToken: secrets.bearerToken };

function thrown(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("no credential is printed", () => {
  it("by util.inspect, JSON.stringify or String() of an ErmrestCatalog, which shows *** instead", () => {
    const catalog = new ErmrestCatalog({ server: "ermrest.example.org", catalogId: 1, credentials });
    expectNoSecret(catalog);
    expect(catalog.toJSON()).toEqual({
      url: "https://ermrest.example.org/ermrest/catalog/1",
      caching: true,
      maxResponseBytes: 64 * 1024 * 1024,
      maxCacheBytes: 64 * 1024 * 1024,
      bodyIdleTimeoutMs: 30_000,
      credentials: { cookie: "***", bearerToken: "***" },
    });
    expect(inspect(catalog)).toContain("ErmrestCatalog {");
    expect(inspect(catalog)).toContain("bearerToken: '***'");
    expect(`${catalog}`).toBe("ErmrestCatalog https://ermrest.example.org/ermrest/catalog/1");
    expect(new ErmrestCatalog({ server: "h", catalogId: 1 }).toJSON().credentials).toEqual({});
  });

  it("by a PollingErmrestCatalog, whose amqpUrl shows the password as ***", () => {
    const catalog = new PollingErmrestCatalog({
      server: "ermrest.example.org",
      catalogId: 1,
      credentials,
      amqpServer: `amqps://agent:${secrets.amqpPassword}@broker.example.org/vh`,
    });
    expectNoSecret(catalog);
    expect(catalog.amqpUrl).toBe("amqps://agent:***@broker.example.org/vh?heartbeat=60");
    expect(catalog.toJSON()).toMatchObject({ amqpUrl: catalog.amqpUrl, noticeExchange: "ermrest_changes" });
    expect(inspect(catalog, { depth: 0 })).toContain("PollingErmrestCatalog");
  });

  it("by a PollingErmrestCatalog whose amqpServer carries secret query parameters", () => {
    const catalog = new PollingErmrestCatalog({
      server: "ermrest.example.org",
      catalogId: 1,
      amqpServer: `amqps://agent@broker.example.org/vh?auth_token=${secrets.amqpPassword}&channel_max=9`,
    });
    expectNoSecret(catalog);
    expect(catalog.amqpUrl).toBe(
      "amqps://agent@broker.example.org/vh?auth_token=***&channel_max=9&heartbeat=60",
    );
  });

  it("by the option errors of a bad amqpServer or a server with user information", () => {
    for (const amqpServer of [
      `amqp://agent:${secrets.amqpPassword}@[broken`,
      `http://agent:${secrets.amqpPassword}@broker`,
      `agent:${secrets.amqpPassword}@[broken`,
      `http://broker/?password=${secrets.amqpPassword}`,
    ]) {
      const error = thrown(() => new PollingErmrestCatalog({ server: "h", catalogId: 1, amqpServer }));
      expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
      expect((error as Error).message).toContain("amqpServer");
      expect((error as Error).message).toContain("***");
      expectNoSecret(error);
    }
    const error = thrown(
      () => new ErmrestCatalog({ server: `agent:${secrets.amqpPassword}@ermrest.example.org`, catalogId: 1 }),
    );
    expect(XError.is(error, "ERR_X_POLLING_CATALOG_INVALID_OPTION")).toBe(true);
    expect((error as Error).message).toContain('invalid option server: "***@ermrest.example.org"');
    expectNoSecret(error);
  });

  it("by an HTTPError, its response, or a response's Set-Cookie", async () => {
    await using stub = await startStubServer((_request, response) => {
      response.writeHead(401, { "Set-Cookie": `${secrets.cookie}; Path=/`, "Content-Type": "text/plain" });
      response.end("Unauthorized.");
    });
    const catalog = new ErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1, credentials });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).response.headers.get("set-cookie")).toContain(secrets.cookie);
    expectNoSecret(error, (error as HTTPError).response);
    expect((error as HTTPError).response.toJSON().headers["set-cookie"]).toBe("***");
    const response = new CatalogResponse(200, new Headers({ "set-cookie": secrets.cookie }), "http://h/", "");
    expectNoSecret(response);
  });

  it("by an HTTPError whose body echoes the request's credentials, which shows *** there instead", async () => {
    await using stub = await startStubServer((request, response) => {
      response.writeHead(400, { "Content-Type": "text/plain" });
      response.end(`Bad request. You sent: ${JSON.stringify(request.headers)}`);
    });
    const catalog = new ErmrestCatalog({ scheme: "http", server: stub.server, catalogId: 1, credentials });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).body).toContain('"authorization":"Bearer ***"');
    expect((error as HTTPError).body).toContain('"cookie":"***"');
    expectNoSecret(error, (error as HTTPError).body, (error as HTTPError).response.text());
  });

  it("by a network error after the retries", async () => {
    const catalog = new ErmrestCatalog({
      scheme: "http",
      server: `127.0.0.1:${await closedPort()}`,
      catalogId: 1,
      credentials,
    });
    const error = await catalog.get("/entity/S:T").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expectNoSecret(error);
  });

  it("by any event payload, log line or error of blockingPoll (outage, AMQP down, claims)", async () => {
    await using fake = await startFakeErmrest({
      tables: { "S:Job": { key: ["id"], rows: [{ id: 1, state: "queued" }], types: { id: "int4" } } },
    });
    const log = recordingLogger();
    const options: PollingErmrestCatalogOptions = {
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      credentials,
      logger: log.logger,
      // A closed port: every bind fails, and the amqp event carries the error.
      amqpServer: `amqp://agent:${secrets.amqpPassword}@127.0.0.1:${await closedPort()}`,
    };
    const catalog = new PollingErmrestCatalog(options);
    const payloads: unknown[] = [];
    for (const name of ["wake", "amqp", "claimed", "outage", "recovered"] as const)
      catalog.on(name, (payload: unknown) => payloads.push({ name, payload }));
    fake.failNext(5, { status: 503 }); // the first drain's GET fails after its retries: an outage
    let calls = 0;
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const polling = catalog.blockingPoll(
      async () => {
        calls++;
        if (calls === 3) fake.failNext(1, { status: 401 }); // then a fatal error ends blockingPoll
        const change = await catalog.stateChangeOnce(
          "/entity/S:Job/state=queued",
          "/attributegroup/S:Job/id;state",
          (row) => ({ id: row.id, state: "running" }),
        );
        return change.batch.length > 0;
      },
      { pollingMs: 60_000, maxRetryDelayMs: 50, signal: controller.signal },
    );
    const error = await polling.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).status).toBe(401);
    const names = payloads.map((p) => (p as { name: string }).name);
    for (const name of ["wake", "amqp", "claimed", "outage", "recovered"]) expect(names).toContain(name);
    expect(log.records.length).toBeGreaterThan(3);
    expect(fake.requests.every((r) => r.headers.cookie === secrets.cookie)).toBe(true);
    expectNoSecret(error, catalog, ...payloads, ...log.records);
  });

  it("by the fake ERMrest, whose requests keep the clients' headers", async () => {
    await using fake = await startFakeErmrest({ tables: { "S:T": { key: ["id"] } } });
    await new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: 1, credentials }).get(
      "/entity/S:T",
    );
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${secrets.bearerToken}`);
    expectNoSecret(fake);
    expect(fake.toJSON()).toEqual({
      url: fake.url,
      version: 1,
      requests: 1,
      writeDurationMs: 20,
      transactionAbortRate: 0,
    });
  });
});
