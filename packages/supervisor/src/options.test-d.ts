import type { Logger } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import {
  type HttpEndpoint,
  type Job,
  type RunWorkerOptions,
  runWorker,
  type Supervisor,
  type SupervisorOptions,
  startSupervisor,
  type TlsEndpoint,
} from "./index.js";

/** The option names that end in `Ms` (durations). */
type MsKeys<T> = Extract<keyof T, `${string}Ms`>;

describe("startSupervisor() options", () => {
  it("lists exactly the documented options, three of them required", () => {
    expectTypeOf<keyof SupervisorOptions>().toEqualTypeOf<
      | "db"
      | "dbMode"
      | "fetchersDir"
      | "socket"
      | "socketMode"
      | "socketGroup"
      | "maxConnections"
      | "tls"
      | "maxTlsHandshakes"
      | "tlsHandshakeTimeoutMs"
      | "http"
      | "logger"
      | "signal"
    >();
    expectTypeOf<SupervisorOptions>().toEqualTypeOf<{
      db: string;
      dbMode?: number;
      fetchersDir: string;
      socket: string;
      socketMode?: number;
      socketGroup?: number | string;
      maxConnections?: number;
      tls?: TlsEndpoint;
      maxTlsHandshakes?: number;
      tlsHandshakeTimeoutMs?: number;
      http?: HttpEndpoint;
      logger?: Logger;
      signal?: AbortSignal;
    }>();
    expectTypeOf<HttpEndpoint>().toEqualTypeOf<{
      host?: string;
      port: number;
      refreshMs?: number;
      pageSize?: number;
      allowedHosts?: string[];
    }>();
    expectTypeOf<TlsEndpoint>().toEqualTypeOf<{
      host: string;
      port: number;
      certFile: string;
      keyFile: string;
      caFile: string;
    }>();
  });

  it("needs db, fetchersDir and socket, and resolves with the Supervisor", () => {
    const paths = { db: "state.db", fetchersDir: "fetchers", socket: "supervisor.sock" };
    expectTypeOf(startSupervisor).toBeCallableWith(paths);
    expectTypeOf(startSupervisor).toBeCallableWith({
      ...paths,
      socketMode: 0o600,
      signal: AbortSignal.timeout(1),
    });
    expectTypeOf(startSupervisor(paths)).toEqualTypeOf<Promise<Supervisor>>();
    // @ts-expect-error: the socket is required
    startSupervisor({ db: "state.db", fetchersDir: "fetchers" });
    // @ts-expect-error: options are required
    startSupervisor();
    // @ts-expect-error: an unknown option (the CLI's positional order is not an option)
    startSupervisor({ ...paths, fetchers: "fetchers" });
  });
});

describe("runWorker() options", () => {
  it("lists exactly the documented options, every duration in ms", () => {
    expectTypeOf<keyof RunWorkerOptions>().toEqualTypeOf<
      "socket" | "tls" | "run" | "idleDelayMs" | "reconnectDelayMs" | "replyTimeoutMs" | "signal" | "logger"
    >();
    expectTypeOf<MsKeys<RunWorkerOptions>>().toEqualTypeOf<
      "idleDelayMs" | "reconnectDelayMs" | "replyTimeoutMs"
    >();
    expectTypeOf<Required<RunWorkerOptions>[MsKeys<RunWorkerOptions>]>().toEqualTypeOf<number>();
  });

  it("types run(job, signal) as resolving to an exit code", () => {
    expectTypeOf<RunWorkerOptions["run"]>().toEqualTypeOf<
      (job: Job, signal: AbortSignal) => Promise<number>
    >();
    runWorker({
      socket: "supervisor.sock",
      run: async (job, signal) => {
        expectTypeOf(job).toEqualTypeOf<Job>();
        expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
        return 0;
      },
    });
    // @ts-expect-error: the exit code is a number, not a boolean
    runWorker({ socket: "s", run: async () => true });
    // @ts-expect-error: run must return a promise
    runWorker({ socket: "s", run: () => 0 });
  });

  it("needs socket or tls (not both) and run, and resolves with nothing", () => {
    expectTypeOf(runWorker({ socket: "s", run: async () => 0 })).toEqualTypeOf<Promise<void>>();
    const tls = { host: "h", port: 1, certFile: "c", keyFile: "k", caFile: "a" };
    expectTypeOf(runWorker({ tls, run: async () => 0 })).toEqualTypeOf<Promise<void>>();
    // @ts-expect-error: run is required
    runWorker({ socket: "s" });
    // @ts-expect-error: socket or tls is required
    runWorker({ run: async () => 0 });
    // @ts-expect-error: not both
    runWorker({ socket: "s", tls, run: async () => 0 });
    // @ts-expect-error: the TLS files are required
    runWorker({ tls: { host: "h", port: 1 }, run: async () => 0 });
  });

  it("rejects durations without their unit", () => {
    // @ts-expect-error: `idleDelay` is spelled `idleDelayMs`
    runWorker({ socket: "s", run: async () => 0, idleDelay: 60 });
    // @ts-expect-error: `timeout` is `replyTimeoutMs`
    runWorker({ socket: "s", run: async () => 0, timeout: 30 });
    // @ts-expect-error: a duration is a number of ms, not a string like the CLI's "60s"
    runWorker({ socket: "s", run: async () => 0, idleDelayMs: "60s" });
  });
});
