import { XError } from "@x/core";
import { describe, expect, it } from "vitest";
import * as api from "./index.js";
import { CatalogResponse } from "./response.js";
import * as testing from "./testing/index.js";

const response = (status: number) =>
  new CatalogResponse(status, new Headers(), "http://example.org/ermrest/catalog/1/entity/S:T", "body");

/** One instance of each exported error class, built the way the package builds it. */
const instances: Record<string, () => Error> = {
  PollingCatalogError: () => new api.PollingCatalogError(api.ErrorCode.INVALID_OPTION, "x"),
  HTTPError: () => new api.HTTPError(response(500)),
  NotModified: () => new api.NotModified(response(304)),
  ConcurrentUpdate: () => new api.ConcurrentUpdate(response(412)),
};

describe("errors", () => {
  it("every exported error class has its own name and is a PollingCatalogError", () => {
    const classes = Object.entries({ ...api, ...testing }).filter(
      ([, value]) => typeof value === "function" && value.prototype instanceof Error,
    );
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(instances).sort());
    for (const [name, ErrorClass] of classes) {
      const error = instances[name]?.() as Error;
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toBeInstanceOf(api.PollingCatalogError);
      expect(error.name).toBe(name);
      expect(String(error).startsWith(`${name}: `)).toBe(true);
      expect(XError.is(error)).toBe(true);
    }
  });

  it("every code is ERR_X_POLLING_CATALOG_ plus its key", () => {
    for (const [key, code] of Object.entries(api.ErrorCode))
      expect(code).toBe(`ERR_X_POLLING_CATALOG_${key}`);
    expect(api.ErrorCode.INVALID_OPTION).toBe("ERR_X_POLLING_CATALOG_INVALID_OPTION");
  });
});
