import { describe, expect, it } from "vitest";
import { closedPort, startTestFake } from "../test/helpers.js";
import { PollingErmrestCatalog } from "./index.js";

describe("where change notices come from by default", () => {
  it("a catalog of a fake ERMrest that publishes no notices binds nowhere, and only polls", async () => {
    await using fake = await startTestFake({ "S:Job": { key: ["id"], rows: [] } });
    const catalog = new PollingErmrestCatalog({ scheme: "http", server: fake.server, catalogId: 1 });
    expect(catalog.amqpUrls).toEqual([]);
    expect(catalog.amqpUrl).toBe("");
    const amqpEvents: unknown[] = [];
    catalog.on("amqp", (event) => amqpEvents.push(event));
    const controller = new AbortController();
    let calls = 0;
    await catalog.blockingPoll(
      async () => {
        calls++;
        await catalog.get("/entity/S:Job");
        controller.abort();
        return false;
      },
      { signal: controller.signal },
    );
    expect(calls).toBe(1);
    expect(amqpEvents).toEqual([]);
  });

  it("once the fake is closed, or for any other server, the catalog's host, as in deriva-py", async () => {
    const fake = await startTestFake({ "S:Job": { key: ["id"], rows: [] } });
    await fake.close();
    const after = new PollingErmrestCatalog({ scheme: "http", server: fake.server, catalogId: 1 });
    expect(after.amqpUrls).toEqual(["amqp://127.0.0.1?heartbeat=60"]);
    const real = new PollingErmrestCatalog({ server: "catalog.example.org", catalogId: 1 });
    expect(real.amqpUrls).toEqual(["amqp://catalog.example.org?heartbeat=60"]);
    expect(real.noticeExchange).toBe("ermrest_changes");
  });

  it("amqpServer given wins over the fake; null means no notices for any server", async () => {
    await using fake = await startTestFake({ "S:Job": { key: ["id"], rows: [] } });
    const port = await closedPort();
    const given = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: 1,
      amqpServer: `127.0.0.1:${port}`,
    });
    expect(given.amqpUrls).toEqual([`amqp://127.0.0.1:${port}?heartbeat=60`]);
    const none = new PollingErmrestCatalog({ server: "catalog.example.org", catalogId: 1, amqpServer: null });
    expect(none.amqpUrls).toEqual([]);
    expect(none.toJSON()).toMatchObject({ amqpUrl: "", noticeExchange: "ermrest_changes" });
  });
});
