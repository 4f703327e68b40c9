import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import type { AmqpEvent, WakeEvent } from "../src/index.js";
import { PollingErmrestCatalog } from "../src/index.js";
import { type FakeErmrest, startFakeErmrest } from "../src/testing/index.js";
import { deleteExchange } from "./helpers.js";

/** Options of {@link startAgentHarness}. */
export interface HarnessOptions {
  /** The AMQP address (or addresses) the agent uses. Default the test broker. */
  agentAmqp?: string | string[];
  /** Whether the fake publishes notices. Default true. */
  notices?: boolean;
}

/**
 * A fake ERMrest publishing notices on a unique exchange, and a PollingErmrestCatalog bound to both, with
 * its events and log records collected.
 */
export async function startAgentHarness(options: HarnessOptions = {}) {
  const exchange = uniqueName("pc-notices");
  const fake: FakeErmrest = await startFakeErmrest({
    tables: { "S:Job": { key: ["id"], columns: ["state"] } },
    ...(options.notices === false ? {} : { amqpUrl: AMQP_URL, noticeExchange: exchange }),
  });
  const recorder = recordingLogger();
  const catalog = new PollingErmrestCatalog({
    scheme: "http",
    server: fake.server,
    catalogId: fake.catalogId,
    amqpServer: options.agentAmqp ?? AMQP_URL,
    noticeExchange: exchange,
    logger: recorder.logger,
  });
  const wakes: Array<WakeEvent & { at: number }> = [];
  const amqp: Array<AmqpEvent & { at: number }> = [];
  catalog.on("wake", (event) => wakes.push({ ...event, at: performance.now() }));
  catalog.on("amqp", (event) => amqp.push({ ...event, at: performance.now() }));
  const controller = new AbortController();
  let nextId = 1;
  return {
    fake,
    catalog,
    exchange,
    recorder,
    wakes,
    amqp,
    controller,
    /** Inserts one row through another client: one write, one notice. */
    write: async () => {
      const response = await fetch(`${fake.url}/entity/S:Job`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify([{ id: nextId++, state: "new" }]),
      });
      await response.text();
      return performance.now();
    },
    /** The server-named queue of the latest bind, from the debug log. */
    queue: () =>
      [...recorder.records].reverse().find((record) => record.msg === "Bound the change-notice queue.")
        ?.fields.queue as string | undefined,
    close: async () => {
      controller.abort();
      await fake.close();
      await deleteExchange(exchange);
    },
  };
}
