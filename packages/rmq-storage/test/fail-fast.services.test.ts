import { XError } from "@x/core";
import { recordingLogger } from "@x/test-support/recording-logger";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { startTcpProxy } from "@x/test-support/tcp-proxy";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { openSqliteStorage, RmqStorageClient, RmqStorageServer } from "../src/index.js";
import { runCli } from "./stack.js";

beforeAll(() => requireService("RabbitMQ", AMQP_URL), 2_000);

/** The broker's URL with its password, virtual host, or host and port changed. */
const wrongPassword = Object.assign(new URL(AMQP_URL), { password: "wrong" }).href;
const unknownVhost = Object.assign(new URL(AMQP_URL), { pathname: "/no-such-vhost-x" }).href;
const refused = "amqp://guest:guest@127.0.0.1:1";
const unknownHost = "amqp://guest:guest@no-such-host.invalid:5672";

/** The rejection of `promise` (which must reject) and how long it took, in ms. */
async function rejection(promise: Promise<unknown>): Promise<{ error: XError; ms: number }> {
  const started = performance.now();
  const error = await promise.then(
    () => {
      throw new Error("resolved, expected a rejection");
    },
    (e: unknown) => e,
  );
  expect(XError.is(error), String(error)).toBe(true);
  return { error: error as XError, ms: performance.now() - started };
}

describe("connecting fails fast and says why", () => {
  it("a refused login or an unknown virtual host rejects at once with ACCESS_REFUSED and the broker's reason", async () => {
    const storage = await openSqliteStorage(":memory:");
    onTestFinished(() => storage.close());
    // A 60 s connect timeout: only the classification can make these end early.
    const login = await rejection(
      RmqStorageClient.connect({ url: wrongPassword, storage, connectTimeoutMs: 60_000 }),
    );
    expect(login.error.code).toBe("ERR_X_RMQ_STORAGE_ACCESS_REFUSED");
    expect(login.error.message).toContain("403 (ACCESS-REFUSED)");
    expect(login.error.message).not.toContain(":wrong@");
    expect(login.ms).toBeLessThan(5_000);
    const vhost = await rejection(
      RmqStorageServer.start({
        url: unknownVhost,
        storage: () => openSqliteStorage(":memory:"),
        connectTimeoutMs: 60_000,
      }),
    );
    expect(vhost.error.code).toBe("ERR_X_RMQ_STORAGE_ACCESS_REFUSED");
    expect(vhost.error.message).toContain('virtual host "no-such-vhost-x"');
    expect(vhost.ms).toBeLessThan(5_000);
  }, 30_000);

  it("a refused connection or an unknown host rejects within seconds with UNREACHABLE and the reason", async () => {
    const storage = await openSqliteStorage(":memory:");
    onTestFinished(() => storage.close());
    for (const [url, reason] of [
      [refused, "ECONNREFUSED"],
      [unknownHost, "ENOTFOUND"],
    ] as const) {
      const { error, ms } = await rejection(
        RmqStorageClient.connect({ url, storage, connectTimeoutMs: 60_000 }),
      );
      expect(error.code, url).toBe("ERR_X_RMQ_STORAGE_UNREACHABLE");
      expect(error.message).toContain(reason);
      expect(ms).toBeLessThan(10_000);
    }
  }, 30_000);

  it("a transient failure keeps being retried, each attempt logged with its reason, until the timeout", async () => {
    const proxy = await startTcpProxy(AMQP_URL);
    onTestFinished(() => proxy.close());
    proxy.refuse(true); // accepts, then hangs up: not "nothing answers"
    const storage = await openSqliteStorage(":memory:");
    onTestFinished(() => storage.close());
    const { logger, records } = recordingLogger();
    const { error, ms } = await rejection(
      RmqStorageClient.connect({ url: proxy.url, storage, connectTimeoutMs: 4_000, logger }),
    );
    expect(error.code).toBe("ERR_X_RMQ_STORAGE_CONNECT");
    expect(error.message).toMatch(/within 4000 ms: .*closed/i);
    expect(ms).toBeGreaterThan(2_000);
    const warnings = records.filter((record) => record.msg.startsWith("cannot connect to RabbitMQ yet"));
    expect(warnings.length).toBeGreaterThan(2);
    expect(warnings[0]?.level).toBe("warn");
    expect(String(warnings[0]?.fields.reason)).toMatch(/closed/i);
  }, 30_000);
});

describe("the CLI exits with the reason: 78 for a refusal, 69 for an unreachable broker", () => {
  it("serve and stats", async () => {
    const started = performance.now();
    const [login, vhost, serveRefused, statsRefused, statsUnknownHost] = await Promise.all([
      runCli(["serve", "--amqp", wrongPassword, "--storage", "sqlite::memory:"]),
      runCli(["stats", "--amqp", unknownVhost]),
      runCli(["serve", "--amqp", refused, "--storage", "sqlite::memory:"]),
      runCli(["stats", "--amqp", refused]),
      runCli(["stats", "--amqp", unknownHost, "--management", "http://127.0.0.1:1"]),
    ]);
    // Five CLIs started at once from the TypeScript sources on a loaded machine: generous, far below 30 s.
    expect(performance.now() - started).toBeLessThan(25_000);
    expect([login.code, vhost.code], login.stderr + vhost.stderr).toEqual([78, 78]);
    expect(login.stderr).toContain("ACCESS_REFUSED - Login was refused");
    expect(login.stderr).not.toContain(":wrong@");
    expect(vhost.stderr).toContain("NOT_ALLOWED");
    expect([serveRefused.code, statsRefused.code, statsUnknownHost.code]).toEqual([69, 69, 69]);
    expect(serveRefused.stderr).toContain("ECONNREFUSED");
    expect(statsRefused.stderr).toContain("ECONNREFUSED");
    expect(statsUnknownHost.stderr).toContain("ENOTFOUND");
  }, 60_000);
});
