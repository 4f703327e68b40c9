import { XError } from "@x/core";
import { parseHostPort } from "@x/core/internal";
import { checkProperty, hostileString, parsesOrRejects } from "@x/test-support/fuzz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  parseCount,
  parseServeArgs,
  parseSocketGroup,
  parseSocketMode,
  parseStatusArgs,
  parseWorkerArgs,
} from "./cli-args.js";

const isUsageError = (error: unknown) => XError.is(error, "ERR_X_USAGE");

/** One argument as a user, a script or an attacker passes it: flags, near-misses, values, hostile strings. */
const argument = fc.oneof(
  fc.constantFrom(
    "--tls",
    "--tls-cert",
    "--tls-key",
    "--tls-ca",
    "--socket-mode",
    "--socket-group",
    "--max-connections",
    "--max-tls-handshakes",
    "--tls-handshake-timeout",
    "--http",
    "--http-host",
    "--log-level",
    "--log-json",
    "--help",
    "--json",
    "--timeout",
    "--max-memory",
    "--idle-delay",
    "--connect",
    "--",
    "-",
    "-h",
    "--tls=",
    "--socket-mode=0660",
    "--socket-mode=8",
    "--socket-group=daemon",
    "--max-connections=0",
    "--log-level=__proto__",
    "--connect=tls://127.0.0.1:1",
    "tls://[::1]:65535",
    "127.0.0.1:99999",
    "0o777",
    "07777",
    "1.5m",
    "512M",
    "state.db",
  ),
  hostileString(),
);
const argv = fc.array(argument, { maxLength: 12 });

describe("x-supervisor command lines under fuzzing", () => {
  it("serve: any arguments parse or give a usage error, and what parses is in range", async () => {
    await checkProperty(
      "supervisor: serve arguments",
      fc.property(argv, (args) => {
        const line = parsesOrRejects(() => parseServeArgs(args), isUsageError);
        if (line === undefined || line.help) return;
        expect(line.socketMode).toBeGreaterThanOrEqual(0);
        expect(line.socketMode).toBeLessThanOrEqual(0o777);
        expect(Number.isSafeInteger(line.maxConnections) && line.maxConnections >= 1).toBe(true);
        if (line.tls) expect(line.tls.port).toBeLessThanOrEqual(65_535);
        if (line.tls === undefined)
          expect([line.maxTlsHandshakes, line.tlsHandshakeTimeoutMs]).toEqual([undefined, undefined]);
        if (line.tlsHandshakeTimeoutMs !== undefined) {
          expect(Number.isSafeInteger(line.tlsHandshakeTimeoutMs) && line.tlsHandshakeTimeoutMs >= 1).toBe(
            true,
          );
        }
      }),
    );
  });

  it("worker: any arguments parse or give a usage error; a parsed line has a command", async () => {
    await checkProperty(
      "supervisor: worker arguments",
      fc.property(argv, (args) => {
        const line = parsesOrRejects(() => parseWorkerArgs(args), isUsageError);
        if (line === undefined || line.help) return;
        expect(line.command.length).toBeGreaterThan(0);
        expect((line.socket === undefined) !== (line.tls === undefined)).toBe(true);
        expect(line.idleDelayMs).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it("status: any arguments parse or give a usage error", async () => {
    await checkProperty(
      "supervisor: status arguments",
      fc.property(argv, (args) => {
        const line = parsesOrRejects(() => parseStatusArgs(args), isUsageError);
        if (line !== undefined && !line.help) expect(typeof line.db).toBe("string");
      }),
    );
  });

  it("--socket-mode, --socket-group, --max-connections and HOST:PORT values: a value in range or a usage error", async () => {
    await checkProperty(
      "supervisor: serve flag values",
      fc.property(hostileString(), (text) => {
        const mode = parsesOrRejects(() => parseSocketMode("--socket-mode", text), isUsageError);
        if (mode !== undefined) expect(mode >= 0 && mode <= 0o777).toBe(true);
        const group = parsesOrRejects(() => parseSocketGroup("--socket-group", text), isUsageError);
        if (typeof group === "number") expect(group >= 0 && group <= 0xfffffffe).toBe(true);
        if (typeof group === "string") expect(group).not.toMatch(/[:\n\0]/);
        const count = parsesOrRejects(
          () => parseCount("--max-connections", text, 1, 1_000_000),
          isUsageError,
        );
        if (count !== undefined) expect(count >= 1 && count <= 1_000_000).toBe(true);
        const address = parsesOrRejects(() => parseHostPort("--tls", text), isUsageError);
        if (address !== undefined) expect(address.port >= 0 && address.port <= 65_535).toBe(true);
      }),
    );
  });

  it("reads back every mode it accepts, in each spelling", async () => {
    await checkProperty(
      "supervisor: socket mode round trip",
      fc.property(fc.integer({ min: 0, max: 0o777 }), fc.constantFrom("", "0", "0o"), (mode, prefix) => {
        expect(parseSocketMode("--socket-mode", prefix + mode.toString(8))).toBe(mode);
      }),
    );
  });
});

describe("x-supervisor command lines", () => {
  it("serve: defaults, and the new flags", () => {
    expect(parseServeArgs(["a.db", "f", "s.sock"])).toMatchObject({
      socketMode: 0o660,
      socketGroup: undefined,
      maxConnections: 512,
      log: { level: "info", json: false, deprecated: [] },
    });
    expect(
      parseServeArgs([
        "a.db",
        "f",
        "s.sock",
        "--socket-mode",
        "0640",
        "--socket-group=builders",
        "--max-connections",
        "64",
      ]),
    ).toMatchObject({ socketMode: 0o640, socketGroup: "builders", maxConnections: 64 });
    expect(parseServeArgs(["a.db", "f", "s.sock", "--socket-group", "1001"]).socketGroup).toBe(1001);
    const tls = ["--tls", "127.0.0.1:0", "--tls-cert", "c", "--tls-key", "k", "--tls-ca", "ca"];
    expect(parseServeArgs(["a.db", "f", "s.sock", ...tls])).toMatchObject({
      maxTlsHandshakes: undefined,
      tlsHandshakeTimeoutMs: undefined,
    });
    expect(
      parseServeArgs([
        "a.db",
        "f",
        "s.sock",
        ...tls,
        "--max-tls-handshakes",
        "8",
        "--tls-handshake-timeout",
        "1.5",
      ]),
    ).toMatchObject({ maxTlsHandshakes: 8, tlsHandshakeTimeoutMs: 1_500 });
    expect(
      parseServeArgs(["a.db", "f", "s.sock", ...tls, "--tls-handshake-timeout", "1m"]).tlsHandshakeTimeoutMs,
    ).toBe(60_000);
    for (const [bad, message] of [
      [["--max-tls-handshakes", "8"], "--max-tls-handshakes needs --tls"],
      [["--tls-handshake-timeout", "5"], "--tls-handshake-timeout needs --tls"],
      [[...tls, "--max-tls-handshakes", "0"], "--max-tls-handshakes"],
      [[...tls, "--tls-handshake-timeout", "0"], "--tls-handshake-timeout"],
      [[...tls, "--tls-handshake-timeout", "5ms"], "--tls-handshake-timeout"],
    ] as const) {
      expect(() => parseServeArgs(["a.db", "f", "s.sock", ...bad]), bad.join(" ")).toThrow(
        expect.objectContaining({ code: "ERR_X_USAGE", message: expect.stringContaining(message) }),
      );
    }
    for (const bad of [
      ["--socket-mode", "0800"],
      ["--socket-mode", "1777"],
      ["--socket-mode", "rw"],
      ["--socket-group", "-x"],
      ["--socket-group", "a:b"],
      ["--socket-group", "4294967295"],
      ["--max-connections", "0"],
      ["--max-connections", "1e3"],
      ["--log-level", "toString"],
    ]) {
      expect(() => parseServeArgs(["a.db", "f", "s.sock", ...bad]), bad.join(" ")).toThrow(
        expect.objectContaining({ code: "ERR_X_USAGE" }),
      );
    }
  });
});
