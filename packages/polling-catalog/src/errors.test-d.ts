import type { XError } from "@x/core";
import { describe, expectTypeOf, it } from "vitest";
import type * as api from "./index.js";
import {
  type CatalogResponse,
  ConcurrentUpdate,
  ErrorCode,
  HTTPError,
  NotModified,
  PollingCatalogError,
} from "./index.js";

declare const response: CatalogResponse;

describe("ErrorCode", () => {
  it("holds literal ERR_X_POLLING_CATALOG_… strings", () => {
    expectTypeOf(ErrorCode).toEqualTypeOf<{
      readonly INVALID_OPTION: "ERR_X_POLLING_CATALOG_INVALID_OPTION";
      readonly BAD_PATH: "ERR_X_POLLING_CATALOG_BAD_PATH";
      readonly BAD_RESPONSE: "ERR_X_POLLING_CATALOG_BAD_RESPONSE";
      readonly RESPONSE_TOO_LARGE: "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE";
      readonly NETWORK: "ERR_X_POLLING_CATALOG_NETWORK";
      readonly HTTP: "ERR_X_POLLING_CATALOG_HTTP";
      readonly NOT_MODIFIED: "ERR_X_POLLING_CATALOG_NOT_MODIFIED";
      readonly CONCURRENT_UPDATE: "ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE";
    }>();
  });

  it("is also the union type of those codes", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      | "ERR_X_POLLING_CATALOG_INVALID_OPTION"
      | "ERR_X_POLLING_CATALOG_BAD_PATH"
      | "ERR_X_POLLING_CATALOG_BAD_RESPONSE"
      | "ERR_X_POLLING_CATALOG_RESPONSE_TOO_LARGE"
      | "ERR_X_POLLING_CATALOG_NETWORK"
      | "ERR_X_POLLING_CATALOG_HTTP"
      | "ERR_X_POLLING_CATALOG_NOT_MODIFIED"
      | "ERR_X_POLLING_CATALOG_CONCURRENT_UPDATE"
    >();
    // @ts-expect-error: the pre-release `ERR_X_POLLING_CATALOG_BAD_OPTION` is gone
    const old: ErrorCode = "ERR_X_POLLING_CATALOG_BAD_OPTION";
    void old;
  });

  it("replaces the removed `ErrorCodes` export", () => {
    expectTypeOf<typeof api>().not.toHaveProperty("ErrorCodes");
  });
});

describe("error classes", () => {
  it("form one hierarchy under XError", () => {
    expectTypeOf<PollingCatalogError>().toExtend<XError>();
    expectTypeOf<HTTPError>().toExtend<PollingCatalogError>();
    expectTypeOf<NotModified>().toExtend<HTTPError>();
    expectTypeOf<ConcurrentUpdate>().toExtend<HTTPError>();
    expectTypeOf(PollingCatalogError).toBeConstructibleWith(ErrorCode.BAD_PATH, "bad path");
  });

  it("HTTPError carries the status, URL, body and response", () => {
    expectTypeOf<HTTPError["status"]>().toEqualTypeOf<number>();
    expectTypeOf<HTTPError["url"]>().toEqualTypeOf<string>();
    expectTypeOf<HTTPError["body"]>().toEqualTypeOf<string>();
    expectTypeOf<HTTPError["response"]>().toEqualTypeOf<CatalogResponse>();
    // It holds no request headers, so no credential can leak through it.
    expectTypeOf<HTTPError>().not.toHaveProperty("headers");
    expectTypeOf<HTTPError>().not.toHaveProperty("request");
  });

  it("builds from a response, with an optional code of the package", () => {
    expectTypeOf(HTTPError).toBeConstructibleWith(response);
    expectTypeOf(HTTPError).toBeConstructibleWith(response, ErrorCode.HTTP);
    expectTypeOf(NotModified).toBeConstructibleWith(response, response);
    expectTypeOf(ConcurrentUpdate).toBeConstructibleWith(response);
    // @ts-expect-error: only the package's own codes
    new HTTPError(response, "ERR_X_GUARD_TIMEOUT");
  });

  it("makes the fields read-only and narrows through instanceof", () => {
    const error = new HTTPError(response);
    // @ts-expect-error: readonly
    error.status = 200;
    const caught: unknown = undefined;
    if (caught instanceof ConcurrentUpdate) expectTypeOf(caught.response.etag).toEqualTypeOf<string | null>();
  });
});
