import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { testTempDir } from "@x/test-support/temp-dir";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./stack.js";

beforeAll(() => requireService("RabbitMQ", AMQP_URL));

/** A broker URL whose login RabbitMQ refuses. */
const refusedUrl = () => {
  const url = new URL(AMQP_URL);
  url.password = "wrong-password";
  return url.toString();
};

describe("x-rmq-storage serve: a failed start", () => {
  it("removes the SQLite file it created, and says why in one JSON line", async () => {
    const dir = testTempDir("x-rmq-storage-failed-");
    const db = join(dir, "x.db");
    const refused = await runCli([
      "serve",
      "--amqp",
      refusedUrl(),
      "--storage",
      `sqlite:${db}`,
      "--log-json",
    ]);
    expect(refused.code).toBe(78);
    expect(readdirSync(dir)).toEqual([]);
    const lines = refused.stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({
      level: 50,
      code: "ERR_X_RMQ_STORAGE_ACCESS_REFUSED",
      kind: "refused",
      msg: expect.stringContaining("cannot start: cannot connect to RabbitMQ"),
    });
  }, 30_000);

  it("leaves a SQLite file that was there before", async () => {
    const dir = testTempDir("x-rmq-storage-failed-");
    const db = join(dir, "x.db");
    writeFileSync(db, "");
    const refused = await runCli(["serve", "--amqp", refusedUrl(), "--storage", `sqlite:${db}`]);
    expect(refused.code).toBe(78);
    expect(readdirSync(dir)).toEqual(["x.db"]);
    expect(readFileSync(db).length).toBeGreaterThan(0); // opened as a storage, not removed
  }, 30_000);

  it("writes an unsupported storage as a JSON line too", async () => {
    const bad = await runCli(["serve", "--amqp", AMQP_URL, "--storage", "mysql://db", "--log-json"]);
    expect(bad.code).toBe(78);
    expect(JSON.parse(bad.stderr)).toMatchObject({
      level: 50,
      code: "ERR_X_RMQ_STORAGE_INVALID_OPTION",
      msg: expect.stringContaining("unsupported storage from --storage"),
    });
  });
});
