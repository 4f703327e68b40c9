import { AMQP_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type AmqpEvent, PollingErmrestCatalog } from "../src/index.js";
import { startFakeErmrest } from "../src/testing/index.js";
import { deleteExchange } from "./helpers.js";
import { expectNoSecret, secrets } from "./secrets.js";

beforeAll(() => requireService("RabbitMQ", AMQP_URL));

/** The broker's URL with a wrong password: the handshake reaches RabbitMQ and is refused. */
function wrongPasswordUrl(): string {
  const url = new URL(AMQP_URL);
  url.password = secrets.amqpPassword;
  return url.href;
}

describe("no AMQP password is printed (RabbitMQ)", () => {
  it("by the amqp event and the log of a bind refused for a wrong password", async () => {
    await using fake = await startFakeErmrest({ tables: { "S:T": { key: ["id"] } } });
    const catalog = new PollingErmrestCatalog({
      scheme: "http",
      server: fake.server,
      catalogId: fake.catalogId,
      amqpServer: wrongPasswordUrl(),
      noticeExchange: uniqueName("secrets"),
    });
    const events: AmqpEvent[] = [];
    catalog.on("amqp", (event) => events.push(event));
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const polling = catalog.blockingPoll(() => false, { signal: controller.signal });
    await waitFor(() => events.length > 0, 20_000, "the failed bind");
    controller.abort();
    await polling;
    expect(events[0]?.state).toBe("down");
    expectNoSecret(catalog, ...events);
  });

  it("by the error of startFakeErmrest when the broker refuses the password, or the fake itself", async () => {
    const error = await startFakeErmrest({ tables: {}, amqpUrl: wrongPasswordUrl() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expectNoSecret(error);
    const exchange = uniqueName("secrets");
    onTestFinished(() => deleteExchange(exchange));
    await using fake = await startFakeErmrest({ tables: {}, amqpUrl: AMQP_URL, noticeExchange: exchange });
    expect(JSON.stringify(fake)).not.toContain(new URL(AMQP_URL).password || "\0");
  });
});
