import { describe, expectTypeOf, it } from "vitest";
import {
  type Cache,
  type ConsoleLoggerOptions,
  createConsoleLogger,
  type LogFn,
  type Logger,
  type LogLevel,
  logLevels,
  type MaybePromise,
  MemoryCache,
  type SyncCache,
  silentLogger,
} from "./index.js";

describe("Logger", () => {
  it("has four pino-shaped methods", () => {
    expectTypeOf<keyof Logger>().toEqualTypeOf<"debug" | "info" | "warn" | "error">();
    expectTypeOf<Logger["info"]>().toEqualTypeOf<LogFn>();
    expectTypeOf<LogFn>().toBeCallableWith("message");
    expectTypeOf<LogFn>().toBeCallableWith({ err: new Error() }, "message");
    expectTypeOf<LogFn>().toBeCallableWith({ n: 1 });
    // @ts-expect-error: the fields come first, the message second
    silentLogger.info("message", { n: 1 });
  });

  it("levels and the console logger's options", () => {
    expectTypeOf<LogLevel>().toEqualTypeOf<"debug" | "info" | "warn" | "error" | "silent">();
    expectTypeOf(logLevels).toEqualTypeOf<{
      readonly debug: 20;
      readonly info: 30;
      readonly warn: 40;
      readonly error: 50;
    }>();
    expectTypeOf<keyof ConsoleLoggerOptions>().toEqualTypeOf<"level" | "stream" | "json" | "name">();
    expectTypeOf(createConsoleLogger({ level: "silent" })).toEqualTypeOf<Logger>();
    // @ts-expect-error: pino's `trace` is not a level of the toolkit
    createConsoleLogger({ level: "trace" });
  });
});

describe("Cache", () => {
  it("may answer synchronously or with a promise", () => {
    expectTypeOf<MaybePromise<number>>().toEqualTypeOf<number | Promise<number>>();
    expectTypeOf<ReturnType<Cache<Date>["get"]>>().toEqualTypeOf<MaybePromise<Date | undefined>>();
    expectTypeOf<ReturnType<Cache["has"]>>().toEqualTypeOf<MaybePromise<boolean>>();
  });

  it("SyncCache answers synchronously", () => {
    expectTypeOf<SyncCache<Date>>().toExtend<Cache<Date>>();
    expectTypeOf<ReturnType<SyncCache<Date>["get"]>>().toEqualTypeOf<Date | undefined>();
    expectTypeOf<ReturnType<SyncCache["delete"]>>().toEqualTypeOf<boolean>();
  });

  it("MemoryCache keeps its value type", () => {
    const cache = new MemoryCache<{ since: Date }>();
    expectTypeOf(cache).toExtend<SyncCache<{ since: Date }>>();
    expectTypeOf(cache.get("k")).toEqualTypeOf<{ since: Date } | undefined>();
    expectTypeOf(cache.size).toEqualTypeOf<number>();
    // @ts-expect-error: the value type is fixed
    cache.set("k", { since: "yesterday" });
    // @ts-expect-error: keys are strings
    cache.get(1);
    expectTypeOf(new MemoryCache().get("k")).toEqualTypeOf<unknown>();
  });
});
