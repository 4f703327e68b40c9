import type { Logger } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import {
  type BlockingPollOptions,
  type CatalogDescription,
  type CatalogResponse,
  type Credentials,
  type DeleteOptions,
  ErmrestCatalog,
  type ErmrestCatalogOptions,
  type FetchFunction,
  type GetOptions,
  type HeadersInput,
  PollingErmrestCatalog,
  type PollingErmrestCatalogOptions,
  type PostOptions,
  type PutOptions,
} from "./index.js";

/** The option names that end in `Ms` (durations). */
type MsKeys<T> = Extract<keyof T, `${string}Ms`>;

declare const catalog: PollingErmrestCatalog;
declare const response: CatalogResponse;
const lookForWork = async () => false;

describe("catalog options", () => {
  it("lists exactly the documented options; server and catalogId are required", () => {
    expectTypeOf<ErmrestCatalogOptions>().toEqualTypeOf<{
      scheme?: "http" | "https";
      server: string;
      catalogId: string | number;
      credentials?: Credentials;
      caching?: boolean;
      maxResponseBytes?: number;
      maxCacheBytes?: number;
      bodyIdleTimeoutMs?: number;
      maxTransactionRetryMs?: number;
      writePacing?: boolean | "commit-rate" | "turns";
      logger?: Logger;
      fetch?: FetchFunction;
    }>();
    expectTypeOf<keyof PollingErmrestCatalogOptions>().toEqualTypeOf<
      keyof ErmrestCatalogOptions | "amqpServer" | "noticeExchange"
    >();
    expectTypeOf<Credentials>().toEqualTypeOf<{ cookie?: string; bearerToken?: string }>();
    expectTypeOf<FetchFunction>().toEqualTypeOf<(input: string, init: RequestInit) => Promise<Response>>();
  });

  it("constructs with the required options only", () => {
    expectTypeOf(ErmrestCatalog).toBeConstructibleWith({ server: "example.org", catalogId: 1 });
    expectTypeOf(PollingErmrestCatalog).toBeConstructibleWith({
      server: "example.org",
      catalogId: "1",
      amqpServer: "amqp://guest:guest@127.0.0.1:5672",
    });
    // @ts-expect-error: catalogId is required
    new ErmrestCatalog({ server: "example.org" });
    // @ts-expect-error: server is required
    new PollingErmrestCatalog({ catalogId: 1 });
    // @ts-expect-error: ftp is no scheme of ERMrest
    new ErmrestCatalog({ server: "example.org", catalogId: 1, scheme: "ftp" });
    // @ts-expect-error: deriva-py's positional `credentials` dict is an object of cookie/bearerToken
    new ErmrestCatalog({ server: "example.org", catalogId: 1, credentials: { token: "x" } });
  });
});

describe("request options", () => {
  it("types get, put, post and delete options", () => {
    expectTypeOf<GetOptions>().toEqualTypeOf<{
      raiseNotModified?: boolean;
      headers?: HeadersInput;
      signal?: AbortSignal;
    }>();
    expectTypeOf<keyof PutOptions>().toEqualTypeOf<"json" | "guardResponse" | "headers" | "signal">();
    expectTypeOf<PutOptions["guardResponse"]>().toEqualTypeOf<CatalogResponse | undefined>();
    expectTypeOf<keyof PostOptions>().toEqualTypeOf<"json" | "headers" | "signal">();
    expectTypeOf<keyof DeleteOptions>().toEqualTypeOf<"guardResponse" | "headers" | "signal">();
    expectTypeOf<HeadersInput>().toEqualTypeOf<Record<string, string> | Headers | Array<[string, string]>>();
  });

  it("requires a body for put and post only", () => {
    expectTypeOf(catalog.get).toBeCallableWith("/entity/S:Job");
    expectTypeOf(catalog.put).toBeCallableWith("/entity/S:Job", { json: [], guardResponse: response });
    expectTypeOf(catalog.post).toBeCallableWith("/entity/S:Job", { json: [{ state: "new" }] });
    expectTypeOf(catalog.delete).toBeCallableWith("/entity/S:Job/id=1");
    expectTypeOf(catalog.delete).toBeCallableWith("/entity/S:Job/id=1", { guardResponse: response });
    // @ts-expect-error: put needs its options, with json
    catalog.put("/entity/S:Job");
    // @ts-expect-error: json is required
    catalog.post("/entity/S:Job", {});
    // @ts-expect-error: a POST is never guarded
    catalog.post("/entity/S:Job", { json: [], guardResponse: response });
    // @ts-expect-error: a DELETE has no body
    catalog.delete("/entity/S:Job", { json: [] });
  });

  it("resolves every request with a CatalogResponse", () => {
    expectTypeOf(catalog.get("/x")).toEqualTypeOf<Promise<CatalogResponse>>();
    expectTypeOf(catalog.put("/x", { json: null })).toEqualTypeOf<Promise<CatalogResponse>>();
    expectTypeOf(catalog.post("/x", { json: 1 })).toEqualTypeOf<Promise<CatalogResponse>>();
    expectTypeOf(catalog.delete("/x")).toEqualTypeOf<Promise<CatalogResponse>>();
    expectTypeOf(response.status).toEqualTypeOf<number>();
    expectTypeOf(response.etag).toEqualTypeOf<string | null>();
    expectTypeOf(response.headers).toEqualTypeOf<Headers>();
    expectTypeOf(response.text()).toEqualTypeOf<string>();
    // json() is unknown, not any: the caller must say what it expects.
    expectTypeOf(response.json()).toEqualTypeOf<unknown>();
  });
});

describe("blockingPoll() options", () => {
  it("lists exactly the documented options, every duration in ms", () => {
    expectTypeOf<keyof BlockingPollOptions>().toEqualTypeOf<
      | "pollingMs"
      | "coalesceMs"
      | "maxCoalesceMs"
      | "maxRetryDelayMs"
      | "maxOutageMs"
      | "maxBindDelayMs"
      | "outageSummaryMs"
      | "signal"
    >();
    expectTypeOf<MsKeys<BlockingPollOptions>>().toEqualTypeOf<
      | "pollingMs"
      | "coalesceMs"
      | "maxCoalesceMs"
      | "maxRetryDelayMs"
      | "maxOutageMs"
      | "maxBindDelayMs"
      | "outageSummaryMs"
    >();
    expectTypeOf<Required<BlockingPollOptions>[MsKeys<BlockingPollOptions>]>().toEqualTypeOf<number>();
  });

  it("lets options go and resolves with nothing", () => {
    expectTypeOf(catalog.blockingPoll(lookForWork)).toEqualTypeOf<Promise<void>>();
    expectTypeOf(catalog.blockingPoll).toBeCallableWith(lookForWork, { pollingMs: 600_000, coalesceMs: 100 });
    // @ts-expect-error: lookForWork is required
    catalog.blockingPoll();
  });

  it("rejects the removed spellings in seconds", () => {
    // @ts-expect-error: `pollingSeconds` became `pollingMs`
    catalog.blockingPoll(lookForWork, { pollingSeconds: 1 });
    // @ts-expect-error: `coalesceSeconds` became `coalesceMs`
    catalog.blockingPoll(lookForWork, { coalesceSeconds: 0.1 });
    // @ts-expect-error: `maxCoalesceSeconds` became `maxCoalesceMs`
    catalog.blockingPoll(lookForWork, { maxCoalesceSeconds: 5 });
    // @ts-expect-error: deriva-py's snake case is not accepted
    catalog.blockingPoll(lookForWork, { polling_seconds: 600 });
  });
});

describe("what a catalog prints", () => {
  it("toJSON gives the URL, the settings and which credentials are set", () => {
    expectTypeOf<CatalogDescription>().toEqualTypeOf<{
      url: string;
      caching: boolean;
      maxResponseBytes: number;
      maxCacheBytes: number;
      bodyIdleTimeoutMs: number;
      credentials: { cookie?: string; bearerToken?: string };
    }>();
    expectTypeOf(catalog.toJSON()).toEqualTypeOf<
      CatalogDescription & { amqpUrl: string; noticeExchange: string }
    >();
    expectTypeOf(response.toJSON()).toEqualTypeOf<{
      status: number;
      url: string;
      etag: string | null;
      headers: Record<string, string>;
    }>();
  });
});
