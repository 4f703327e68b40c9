import { errorReasons } from "@x/core/internal";
import { ErrorCode, PollingCatalogError } from "./errors.js";

/**
 * `error` as {@link PollingCatalogError} `ERR_X_POLLING_CATALOG_NETWORK` (with `error` as its `cause`) when
 * it is a transport failure that survived the retries: undici's bare `TypeError: fetch failed` (or
 * `terminated`), whose reason is only in its `cause`, or the `TimeoutError` of `attemptTimeoutMs`. The message
 * names the request and every reason down the chain, e.g.
 * `GET http://127.0.0.1:1/ermrest/catalog/1/entity/S:T: fetch failed: connect ECONNREFUSED 127.0.0.1:1`.
 * Any other error is returned as it is.
 *
 * @param error - what the last attempt rejected with
 * @param what - names the request, e.g. `GET https://…/entity/S:T`
 */
export function networkError(error: unknown, what: string): unknown {
  const bare =
    (error instanceof TypeError && (error.message === "fetch failed" || error.message === "terminated")) ||
    (error instanceof Error && error.name === "TimeoutError");
  if (!bare) return error;
  return new PollingCatalogError(ErrorCode.NETWORK, `${what}: ${errorReasons(error)}`, { cause: error });
}
