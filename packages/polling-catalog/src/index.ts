export type {
  Credentials,
  ErmrestCatalogOptions,
  FetchFunction,
} from "./catalog-options.js";
export {
  type CatalogDescription,
  type DeleteOptions,
  ErmrestCatalog,
  type GetOptions,
  type HeadersInput,
  type PostOptions,
  type PutOptions,
} from "./ermrest-catalog.js";
export {
  ConcurrentUpdate,
  ErrorCode,
  HTTPError,
  NotModified,
  PollingCatalogError,
} from "./errors.js";
export type {
  AmqpEvent,
  ClaimedEvent,
  OutageEvent,
  PollingCatalogEvents,
  RecoveredEvent,
  WakeEvent,
  WakeReason,
} from "./events.js";
export { type LeaseClaim, type LeaseClaimOptions, leaseClaim } from "./lease.js";
export {
  type BlockingPollOptions,
  PollingErmrestCatalog,
  type PollingErmrestCatalogOptions,
  type Row,
  type RowTransform,
  type StateChange,
  type StateChangeOptions,
} from "./polling-catalog.js";
export { CatalogResponse } from "./response.js";
