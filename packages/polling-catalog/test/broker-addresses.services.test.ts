import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { waitFor } from "@x/test-support/wait-for";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type AmqpEvent, PollingErmrestCatalog } from "../src/index.js";
import { startAgentHarness } from "./agent-harness.js";
import { closedPort } from "./helpers.js";
import { secrets } from "./secrets.js";

beforeAll(() => requireService("RabbitMQ", AMQP_URL));

/** {@link startAgentHarness}, closed when the current test finishes. */
async function harness(agentAmqp: string | string[]) {
  const h = await startAgentHarness({ agentAmqp });
  onTestFinished(() => h.close());
  return h;
}

/** The `url` of an `up` event. */
const boundAt = (event: AmqpEvent | undefined) => (event?.state === "up" ? event.url : undefined);

describe("several broker addresses", () => {
  it.each([
    ["a list", (refused: string) => [refused, AMQP_URL]],
    ["a string separated by spaces", (refused: string) => `${refused} \n ${AMQP_URL}`],
  ])("given as %s: a refused first address moves the bind to the next one at once", async (_, given) => {
    const refused = `127.0.0.1:${await closedPort()}`;
    const h = await harness(given(refused));
    expect(h.catalog.amqpUrls).toHaveLength(2);
    expect(h.catalog.amqpUrl).toBe(h.catalog.amqpUrls.join(" "));
    const started = performance.now();
    const done = h.catalog.blockingPoll(() => false, { pollingMs: 600_000, signal: h.controller.signal });
    await waitFor(() => h.amqp.length > 0, 5_000, "the bind");
    // Bound at the second address at once (no backoff between addresses), with no `down` on the way.
    expect(h.amqp.map((event) => event.state)).toEqual(["up"]);
    expect(boundAt(h.amqp[0])).toBe(h.catalog.amqpUrls[1]);
    expect(boundAt(h.amqp[0])).toContain("127.0.0.1:5672");
    expect((h.amqp[0]?.at as number) - started).toBeLessThan(2_000);
    expect(h.wakes[0]?.reason).toBe("start");
    await h.write();
    await waitFor(() => h.wakes.some((wake) => wake.reason === "notice"), 5_000, "a notice");
    h.controller.abort();
    await done;
  });

  it("every address failing is one failed bind naming each address, passwords as ***", async () => {
    const ports = [await closedPort(), await closedPort()];
    const catalog = new PollingErmrestCatalog({
      server: `127.0.0.1:${await closedPort()}`,
      scheme: "http",
      catalogId: 1,
      amqpServer: ports.map((port) => `amqp://agent:${secrets.amqpPassword}@127.0.0.1:${port}`),
    });
    expect(catalog.amqpUrl).not.toContain(secrets.amqpPassword);
    const events: AmqpEvent[] = [];
    catalog.on("amqp", (event) => events.push(event));
    const controller = new AbortController();
    const done = catalog.blockingPoll(() => false, { signal: controller.signal });
    await waitFor(() => events.length > 0, 5_000, "the failed bind");
    controller.abort();
    await done;
    const [event] = events;
    if (event?.state !== "down") throw new Error(`expected a down event, got ${JSON.stringify(event)}`);
    expect(event.error).toBeInstanceOf(AggregateError);
    expect((event.error as AggregateError).errors).toHaveLength(2);
    for (const port of ports) expect(event.error.message).toContain(`agent:***@127.0.0.1:${port}`);
    expect(event.error.message).not.toContain(secrets.amqpPassword);
    // A failed round waits the usual bind backoff: 5 s ± 50 %.
    expect(event.retryInMs).toBeGreaterThanOrEqual(2_500);
    expect(event.retryInMs).toBeLessThanOrEqual(7_500);
  });

  it("a connection lost after 5 s up binds again at the next address within 1 s, and notices resume", async () => {
    const proxy = await startTcpProxy(AMQP_URL);
    onTestFinished(() => proxy.close());
    const h = await harness([proxy.url, AMQP_URL]);
    const done = h.catalog.blockingPoll(() => false, { pollingMs: 600_000, signal: h.controller.signal });
    await waitFor(() => h.amqp.length === 1, 5_000, "the bind");
    expect(boundAt(h.amqp[0])).toBe(h.catalog.amqpUrls[0]);
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    const cutAt = performance.now();
    proxy.reset();
    await waitFor(() => h.amqp.length === 3, 5_000, "the loss and the bind at the next address");
    const [, down, up] = h.amqp;
    if (down?.state !== "down") throw new Error("expected a down event");
    expect(down.retryInMs).toBeGreaterThanOrEqual(100);
    expect(down.retryInMs).toBeLessThanOrEqual(1_000);
    expect(boundAt(up)).toBe(h.catalog.amqpUrls[1]);
    // 0.1–1 s, then a connection to a local broker (slack for a loaded machine).
    expect((up?.at as number) - cutAt).toBeLessThan(3_000);
    expect(h.recorder.messages("warn")).toEqual(["Using basic polling due to AMQP communication problems."]);
    await waitFor(() => h.wakes.some((wake) => wake.reason === "rebind"), 5_000, "the rebind drain");
    await h.write();
    await waitFor(() => h.wakes.some((wake) => wake.reason === "notice"), 5_000, "a notice");
    h.controller.abort();
    await done;
  }, 20_000);

  it("a connection lost within 5 s of its bind waits the usual backoff before the next address", async () => {
    const proxy = await startTcpProxy(AMQP_URL);
    onTestFinished(() => proxy.close());
    const h = await harness([proxy.url, AMQP_URL]);
    const done = h.catalog.blockingPoll(() => false, { pollingMs: 600_000, signal: h.controller.signal });
    await waitFor(() => h.amqp.length === 1, 5_000, "the bind");
    proxy.reset();
    await waitFor(() => h.amqp.length === 2, 5_000, "the loss");
    const down = h.amqp[1];
    if (down?.state !== "down") throw new Error("expected a down event");
    expect(down.retryInMs).toBeGreaterThanOrEqual(2_500);
    expect(down.retryInMs).toBeLessThanOrEqual(7_500);
    await waitFor(() => h.amqp.length === 3, 10_000, "the bind at the next address");
    expect(boundAt(h.amqp[2])).toBe(h.catalog.amqpUrls[1]);
    h.controller.abort();
    await done;
  }, 20_000);
});
