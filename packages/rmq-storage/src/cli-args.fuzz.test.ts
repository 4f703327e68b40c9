import { XError } from "@x/core";
import { UsageError } from "@x/core/internal";
import { checkProperty, hostileString, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseServeArgs, parseStatsArgs, parseTeardownArgs } from "./cli-args.js";
import { ErrorCode } from "./errors.js";
import { managementBase } from "./management.js";
import { checkSecretOptions } from "./secrets.js";

const flags = [
  "--amqp",
  "--amqp-file",
  "--storage",
  "--storage-file",
  "--max-items-per-write",
  "--max-concurrent-writes",
  "--prefetch",
  "--processes",
  "--ranges",
  "--standby",
  "--prefix",
  "--heartbeat",
  "--ready-fd",
  "--metrics",
  "--log-level",
  "--json-logs",
  "--log-json",
  "--version",
  "--management",
  "--metrics-host",
  "--json",
  "--force",
  "--drop-storage",
  "--drop-storage-file",
  "-h",
];

/** Command lines as a confused user or a hostile wrapper writes them: known flags, hostile values, strays. */
const argv = fc.array(
  fc.oneof(fc.constantFrom(...flags), hostileString(), fc.constantFrom("--", "-", "--=x")),
  {
    maxLength: 12,
  },
);
const env = fc.record(
  { AMQP_URL: fc.oneof(hostileString(), fc.constant("amqp://h/")), STORAGE_URL: hostileString() },
  { requiredKeys: [] },
);
const isUsage = (error: unknown) => error instanceof UsageError;

describe("x-rmq-storage's command lines under fuzzing", () => {
  it("each parser returns or throws UsageError, for any arguments and environment", async () => {
    for (const [name, parse] of [
      ["serve", parseServeArgs],
      ["stats", parseStatsArgs],
      ["teardown", parseTeardownArgs],
    ] as const)
      await checkProperty(
        `rmq-storage: ${name} arguments`,
        fc.property(argv, env, (args, environment) => {
          const line = parsesOrRejects(() => parse(args, environment), isUsage);
          if (line !== undefined && !line.info) expect(line).toHaveProperty("amqp");
        }),
        1 / 3,
      );
  });

  it("a URL option is accepted or refused as INVALID_OPTION, and the refusal never shows a password", async () => {
    const secret = "Fz-s3cret-pw";
    await checkProperty(
      "rmq-storage: url and storage options",
      fc.property(
        hostileString(),
        fc.constantFrom("amqp://", "amqps://", "postgres://", "http://", "sqlite:", ""),
        hostileString(),
        (before, scheme, after) => {
          const url = `${scheme}${before}:${secret}@${after}`;
          for (const options of [{ url }, { url: "amqp://h/", storage: url }])
            try {
              checkSecretOptions(options);
            } catch (error) {
              expect(XError.is(error, ErrorCode.INVALID_OPTION)).toBe(true);
              expect((error as Error).message).not.toContain(secret);
            }
        },
      ),
    );
  });

  it("stats' management address is a URL or an INVALID_OPTION refusal, never a password in clear", async () => {
    await checkProperty(
      "rmq-storage: stats management address",
      fc.property(
        fc.oneof(
          hostileString(),
          fc.webUrl().map((u) => u.replace(/^https?:/, "amqp:")),
        ),
        fc.option(fc.oneof(hostileString(), fc.webUrl()), { nil: undefined }),
        (url, management) => {
          if (!URL.canParse(url)) return;
          const base = parsesOrRejects(
            () => managementBase(url, management),
            (error) => XError.is(error, ErrorCode.INVALID_OPTION),
          );
          if (base !== undefined && management === undefined && base.protocol === "http:")
            expect(["localhost", "[::1]"].includes(base.hostname) || base.hostname.startsWith("127.")).toBe(
              true,
            );
        },
      ),
    );
  });
});
