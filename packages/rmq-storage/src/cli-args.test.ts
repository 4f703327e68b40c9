import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { XError } from "@x/core";
import { UsageError } from "@x/core/internal";
import { testTempDir } from "@x/test-support/temp-dir";
import { describe, expect, it } from "vitest";
import {
  brokerUrls,
  parseServeArgs,
  parseStatsArgs,
  parseTeardownArgs,
  readUrl,
  type UrlSource,
} from "./cli-args.js";
import { ErrorCode } from "./errors.js";

const env = { AMQP_URL: "amqp://env-user:env-pw@h/", STORAGE_URL: "postgres://u:env-pw@db/x" };
const sources = (line: object) => line as { amqp: UrlSource; storage?: UrlSource };

describe("the URL of a CLI: flag > file > environment", () => {
  it("takes the flag first, then the file flag, then the variable", () => {
    expect(sources(parseServeArgs(["--amqp", "amqp://a/", "--amqp-file", "f"], env)).amqp).toEqual({
      url: "amqp://a/",
      from: "--amqp",
    });
    expect(sources(parseServeArgs(["--amqp-file", "f", "--storage-file", "g"], env))).toMatchObject({
      amqp: { file: "f", from: "--amqp-file" },
      storage: { file: "g", from: "--storage-file" },
    });
    expect(sources(parseServeArgs([], env))).toMatchObject({
      amqp: { url: env.AMQP_URL, from: "AMQP_URL" },
      storage: { url: env.STORAGE_URL, from: "STORAGE_URL" },
    });
    expect(sources(parseStatsArgs([], env)).amqp).toEqual({ url: env.AMQP_URL, from: "AMQP_URL" });
    expect(sources(parseTeardownArgs([], env)).amqp).toEqual({ url: env.AMQP_URL, from: "AMQP_URL" });
  });

  it("needs one of the three, and names them all when none is given (an empty variable counts as none)", () => {
    expect(() => parseServeArgs(["--storage", "sqlite:x"], {})).toThrow(
      "serve needs --amqp URL, --amqp-file FILE or AMQP_URL",
    );
    expect(() => parseServeArgs([], { AMQP_URL: "amqp://h/", STORAGE_URL: "" })).toThrow(
      "serve needs --storage URL, --storage-file FILE or STORAGE_URL",
    );
    expect(() => parseStatsArgs([], {})).toThrow(UsageError);
  });

  it("teardown never drops the storage STORAGE_URL names", () => {
    const line = parseTeardownArgs(["--amqp", "amqp://h/"], env) as { dropStorage: unknown };
    expect(line.dropStorage).toBeUndefined();
    expect(
      (parseTeardownArgs(["--drop-storage-file", "f"], env) as { dropStorage: unknown }).dropStorage,
    ).toEqual({
      file: "f",
      from: "--drop-storage-file",
    });
  });
});

describe("readUrl", () => {
  const file = (name: string, text: string, mode: number) => {
    const path = join(testTempDir("rmq-storage-url-file"), name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };
  const refusal = async (source: UrlSource) => {
    const error = await readUrl(source).catch((e: unknown) => e);
    expect(XError.is(error, ErrorCode.INVALID_OPTION)).toBe(true);
    return (error as Error).message;
  };

  it("reads the file, trimmed", async () => {
    const path = file("ok", "  amqp://u:file-pw@h/\n\n", 0o600);
    expect(await readUrl({ file: path, from: "--amqp-file" })).toBe("amqp://u:file-pw@h/");
    expect(await readUrl({ url: "amqp://x/", from: "--amqp" })).toBe("amqp://x/");
  });

  it("refuses a file every user may read, an empty file and a missing one, without showing the contents", async () => {
    const open = file("open", "amqp://u:open-pw@h/", 0o644);
    expect(await refusal({ file: open, from: "--amqp-file" })).toMatch(/readable by every user \(mode 644\)/);
    expect(await refusal({ file: open, from: "--amqp-file" })).not.toContain("open-pw");
    expect(await refusal({ file: file("empty", " \n", 0o600), from: "--amqp-file" })).toContain("is empty");
    expect(
      await refusal({ file: join(testTempDir("rmq-storage-url-file"), "nope"), from: "--amqp-file" }),
    ).toContain("cannot be read (ENOENT)");
  });
});

describe("serve --metrics", () => {
  it("takes [HOST:]PORT, on the loopback address by default, with an optional --management", () => {
    const metrics = (...flags: string[]) => (parseServeArgs(flags, env) as { metrics: unknown }).metrics;
    expect(metrics()).toBeUndefined();
    expect(metrics("--metrics", "9464")).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(metrics("--metrics", "[::1]:0", "--management", "http://m:15672/")).toEqual({
      host: "::1",
      port: 0,
      management: "http://m:15672/",
    });
  });

  it("refuses a bad address, and --management without --metrics", () => {
    expect(() => parseServeArgs(["--metrics", "host"], env)).toThrow(/--metrics: "host" is not HOST:PORT/);
    expect(() => parseServeArgs(["--management", "http://m/"], env)).toThrow(UsageError);
  });

  it("--metrics-host NAME, repeatable, adds the names /metrics answers for; it needs --metrics", () => {
    const metrics = (...flags: string[]) => (parseServeArgs(flags, env) as { metrics: unknown }).metrics;
    expect(
      metrics("--metrics", "9464", "--metrics-host", "box.example.org", "--metrics-host", "box"),
    ).toEqual({
      host: "127.0.0.1",
      port: 9464,
      allowedHosts: ["box.example.org", "box"],
    });
    expect(() => parseServeArgs(["--metrics-host", "box"], env)).toThrow(/--metrics-host needs --metrics/);
    expect(() => parseServeArgs(["--metrics", "9464", "--metrics-host", "http://box"], env)).toThrow(
      /--metrics-host: "http:\/\/box" is not a host name/,
    );
  });
});

describe("several brokers and quorum queues on the command line", () => {
  it("--amqp given several times, or several URLs in AMQP_URL or a file, are the nodes of a cluster", () => {
    const line = parseServeArgs(["--amqp", "amqp://a/", "--amqp", "amqp://b/", "--storage", "sqlite:x"], {});
    expect(brokerUrls(readUrlNow(sources(line).amqp))).toEqual(["amqp://a/", "amqp://b/"]);
    expect(brokerUrls(" amqp://a/\n amqp://b/\tamqp://c/ ")).toEqual(["amqp://a/", "amqp://b/", "amqp://c/"]);
    expect(brokerUrls(" amqp://a/\n")).toBe("amqp://a/");
  });

  it("--queue-type is classic or quorum; --delivery-limit needs quorum and a positive integer", () => {
    const base = ["--amqp", "amqp://a/", "--storage", "sqlite:x"];
    expect(parseServeArgs([...base, "--queue-type", "quorum", "--delivery-limit", "5"], {})).toMatchObject({
      queueType: "quorum",
      deliveryLimit: 5,
    });
    expect(parseServeArgs(base, {})).toMatchObject({ queueType: undefined, deliveryLimit: undefined });
    for (const bad of [
      ["--queue-type", "stream"],
      ["--delivery-limit", "5"],
      ["--queue-type", "classic", "--delivery-limit", "5"],
      ["--queue-type", "quorum", "--delivery-limit", "-1"],
    ])
      expect(() => parseServeArgs([...base, ...bad], {}), bad.join(" ")).toThrow(UsageError);
  });
});

/** The URL of a source given on the command line. */
function readUrlNow(source: UrlSource): string {
  if (!("url" in source)) throw new Error("expected a URL, not a file");
  return source.url;
}

describe("serve's counts", () => {
  it("reads --max-concurrent-writes (and the other counts) as integers; the server's options refuse 0", () => {
    const line = parseServeArgs(["--max-concurrent-writes", "2", "--max-items-per-write", "500"], env);
    expect(line).toMatchObject({ maxConcurrentWrites: 2, maxItemsPerWrite: 500 });
    expect(parseServeArgs([], env)).toMatchObject({ maxConcurrentWrites: undefined });
    for (const bad of ["1.5", "two", "-1", ""])
      expect(() => parseServeArgs(["--max-concurrent-writes", bad], env)).toThrow(UsageError);
  });
});
