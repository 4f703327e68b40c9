import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { inspect, promisify } from "node:util";
import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL, PG_URL, requireService } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  deleteTopology,
  openPostgresStorage,
  openSqliteStorage,
  RmqStorageClient,
  RmqStorageServer,
} from "../src/index.js";
import { queueStats } from "../src/stats.js";
import { openStorage } from "../src/storage-spec.js";
import { randomId } from "./fixture.js";
import { sandbox } from "./stack.js";

/*
 * No object of ours shows a password: util.inspect (every depth, hidden properties), JSON.stringify and
 * String() of the client, the server and the PostgreSQL storage; every event payload; every log line; every
 * error (message, stack, cause, inspect). A RabbitMQ user with a distinctive password makes a leak findable;
 * PostgreSQL trusts local connections, so any password in its URL works and must never show.
 */

const run = promisify(execFile);
const box = sandbox("secrets");
const user = uniqueName("secrets");
const amqpSecret = `Amqp-${randomBytes(6).toString("hex")}-pw`;
const pgSecret = `Pg-${randomBytes(6).toString("hex")}-pw`;
// libpq's other places for secrets, which pg reads too: `?password=` (it wins over the user information's)
// and `?sslpassword=` (the client key's passphrase).
const pgQuerySecret = `PgQuery-${randomBytes(6).toString("hex")}-pw`;
const pgKeySecret = `PgKey-${randomBytes(6).toString("hex")}-pw`;
const broker = new URL(AMQP_URL);
const url = `amqp://${user}:${amqpSecret}@${broker.host}/`;
const pgUrl = (schema: string) => {
  const parsed = new URL(PG_URL);
  parsed.password = pgSecret;
  parsed.searchParams.set("schema", schema);
  parsed.searchParams.set("password", pgQuerySecret);
  parsed.searchParams.set("sslpassword", pgKeySecret);
  return parsed.toString();
};
const schemas: string[] = [];

beforeAll(async () => {
  await requireService("RabbitMQ", AMQP_URL);
  await requireService("PostgreSQL", PG_URL);
  await run("rabbitmqctl", ["add_user", user, amqpSecret]);
  await run("rabbitmqctl", ["set_permissions", "-p", "/", user, ".*", ".*", ".*"]);
}, 60_000);
afterAll(async () => {
  await run("rabbitmqctl", ["delete_user", user]).catch(() => {});
  for (const schema of schemas) {
    const storage = await openPostgresStorage(PG_URL, { schema });
    await storage.drop();
  }
  await box.cleanup();
}, 60_000);

/** Every way a value can be printed. */
function renderings(value: unknown): string[] {
  const shown = [
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    inspect(value),
    String(value),
  ];
  try {
    shown.push(JSON.stringify(value) ?? "");
  } catch {
    // A cycle: inspect covers it.
  }
  if (value instanceof Error) {
    shown.push(value.message, value.stack ?? "");
    if (value.cause !== undefined) shown.push(...renderings(value.cause));
  }
  return shown;
}

function expectNoSecret(what: string, value: unknown): void {
  for (const text of renderings(value)) {
    expect(text, what).not.toContain(amqpSecret);
    for (const secret of [pgSecret, pgQuerySecret, pgKeySecret]) expect(text, what).not.toContain(secret);
  }
}

/** The error `promise` rejects with. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );

/** Closes every broker connection of the test's user (the management API), so client and server reconnect. */
async function dropConnections(): Promise<number> {
  const auth = { authorization: `Basic ${Buffer.from("guest:guest").toString("base64")}` };
  const list = (await (
    await fetch(`http://${broker.hostname}:15672/api/connections?columns=name,user`, { headers: auth })
  ).json()) as Array<{ name: string; user: string }>;
  const ours = list.filter((connection) => connection.user === user);
  for (const { name } of ours)
    await fetch(`http://${broker.hostname}:15672/api/connections/${encodeURIComponent(name)}`, {
      method: "DELETE",
      headers: auth,
    });
  return ours.length;
}

describe("credentials never show", () => {
  it("in the client, the server, the PostgreSQL storage, their events and their logs, through a reconnect", async () => {
    const prefix = box.prefix();
    const schema = uniqueName("secrets");
    schemas.push(schema);
    const serverLog = recordingLogger();
    const clientLog = recordingLogger();
    const server = await RmqStorageServer.start({
      url,
      storage: pgUrl(schema),
      prefix,
      logger: serverLog.logger,
    });
    onTestFinished(() => server.stop());
    const local = await openSqliteStorage(":memory:");
    const client = await RmqStorageClient.connect({ url, storage: local, prefix, logger: clientLog.logger });
    onTestFinished(() => client.close());
    const events: unknown[] = [];
    for (const emitter of [server, client] as Array<{ emit: (...args: unknown[]) => boolean }>) {
      const emit = emitter.emit.bind(emitter);
      emitter.emit = (...args: unknown[]) => {
        events.push(args);
        return emit(...args);
      };
    }

    await client.waitForServer({ timeoutMs: 30_000 });
    expect(await client.contentAdd(new Map([[randomId(), 1n]]))).toBe(true);
    // The management API lists a connection a few seconds after it opens.
    await waitFor(async () => (await dropConnections()) >= 2, 60_000, "the management API to list both");
    await waitFor(
      () => events.filter((event) => (event as unknown[])[0] === "reconnect").length >= 2,
      30_000,
      "both to reconnect",
    );
    await client.waitForServer({ timeoutMs: 30_000 });
    expect(await client.contentAdd(new Map([[randomId(), 2n]]))).toBe(true);

    for (const [what, value] of [
      ["client", client],
      ["server", server],
    ] as const) {
      expectNoSecret(what, value);
      expect(inspect(value)).toContain(`amqp://${user}:***@`);
      expect(JSON.stringify(value)).toContain(`amqp://${user}:***@`);
      expect(String(value)).toMatch(new RegExp(`^RmqStorage(Client|Server) amqp://${user}:\\*\\*\\*@`));
    }
    expect(JSON.stringify(server)).toContain("postgres:***@");
    expect(JSON.stringify(server)).toContain("password=***&sslpassword=***");
    expect(String(server)).toMatch(/ postgres:\/\/[^:/]+:\*\*\*@/);
    expectNoSecret("an object holding both", { client, server });
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) expectNoSecret("event", event);
    expect(serverLog.messages()).toContain("serving");
    expect(clientLog.messages()).toContain("broker connection lost; reconnecting");
    for (const record of [...serverLog.records, ...clientLog.records]) expectNoSecret("log line", record);
    expect(inspect(serverLog.records)).toContain(":***@");
  }, 120_000);

  it("in the PostgreSQL storage itself", async () => {
    const schema = uniqueName("secrets");
    schemas.push(schema);
    const storage = await openPostgresStorage(pgUrl(schema));
    onTestFinished(() => storage.close());
    expectNoSecret("PostgresStorage", storage);
    expect(inspect(storage)).toContain(":***@");
    expect(inspect(storage)).toContain("?password=***&sslpassword=***");
    expect(String(storage)).toMatch(
      /^PostgresStorage postgres:\/\/[^:/]+:\*\*\*@[^?]+\?password=\*\*\*&sslpassword=\*\*\*$/,
    );
    expect(JSON.parse(JSON.stringify(storage))).toEqual({
      url: expect.stringMatching(/:\*\*\*@.*\?password=\*\*\*&sslpassword=\*\*\*$/),
      schema,
    });
    const opened = await openStorage(pgUrl(schema));
    onTestFinished(() => opened.close());
    expectNoSecret("openStorage", opened);
  });

  it("in the errors of bad URLs, refused logins and unreachable servers", async () => {
    const hostile = [
      `amqp://${user}:${amqpSecret}@[bad/`,
      `http://${user}:${amqpSecret}@host/`,
      `amqp://${user}:${amqpSecret}@host:99999/`,
      `amqp://${user}:p@${amqpSecret}@host/`,
    ];
    const errors: unknown[] = [];
    // A short timeout for the hostile URLs that parse (a password holding an unencoded @ names host "host").
    const connectTimeoutMs = 500;
    for (const bad of hostile) {
      const storage = await openSqliteStorage(":memory:");
      errors.push(await rejection(RmqStorageClient.connect({ url: bad, storage, connectTimeoutMs })));
      errors.push(
        await rejection(RmqStorageServer.start({ url: bad, storage: "sqlite::memory:", connectTimeoutMs })),
      );
      errors.push(await rejection(deleteTopology({ url: bad, connectTimeoutMs })));
      errors.push(await rejection(queueStats({ url: bad, connectTimeoutMs })));
    }
    errors.push(
      await rejection(RmqStorageServer.start({ url: AMQP_URL, storage: `mysql://u:${pgSecret}@db/x` })),
      await rejection(openStorage(`mysql://u:${pgSecret}@db/x`)),
      await rejection(openPostgresStorage(`mysql://u:${pgSecret}@db/x`)),
      await rejection(openStorage(`mysql://db/x?password=${pgQuerySecret}&sslpassword=${pgKeySecret}`)),
      // A libpq keyword=value string is not a URL this package opens: refused, its password hidden.
      await rejection(
        openPostgresStorage(`host=127.0.0.1 password='${pgQuerySecret}' sslpassword=${pgKeySecret}`),
      ),
      await rejection(
        openPostgresStorage(
          `postgres://postgres@127.0.0.1:1/x?password=${pgQuerySecret}&sslpassword=${pgKeySecret}`,
          {
            connectTimeoutMs: 2_000,
          },
        ),
      ),
      await rejection(
        openPostgresStorage(`postgres://postgres:${pgSecret}@127.0.0.1:1/x`, { connectTimeoutMs: 2_000 }),
      ),
      await rejection(
        RmqStorageClient.connect({
          url: `amqp://${user}:wrong-${amqpSecret}@${broker.host}/`,
          storage: await openSqliteStorage(":memory:"),
          connectTimeoutMs: 1_000,
        }),
      ),
      await rejection(
        RmqStorageServer.start({
          url: `amqp://${user}:${amqpSecret}@127.0.0.1:1/`,
          storage: "sqlite::memory:",
          connectTimeoutMs: 500,
        }),
      ),
      await rejection(
        queueStats({ url: `amqp://${user}:${amqpSecret}@127.0.0.1:1/`, connectTimeoutMs: 500 }),
      ),
    );
    for (const error of errors) {
      expect((error as { code?: string }).code).toMatch(
        /^ERR_X_RMQ_STORAGE_(INVALID_OPTION|CONNECT|UNREACHABLE|ACCESS_REFUSED|BACKEND)$/,
      );
      expectNoSecret("error", error);
    }
  }, 120_000);
});
