export { SupervisorClient } from "./client.js";
export { ErrorCode, SupervisorError } from "./errors.js";
export type { RejectEvent, RejectReason, SupervisorEvents, SupervisorStats } from "./events.js";
export { jitterHash } from "./jitter-hash.js";
export { type RunWorkerLoopOptions, type RunWorkerOptions, runWorker } from "./run-worker.js";
export { type FetcherRunStatus, type QueueStatus, readQueueStatus, type UnfinishedJob } from "./status.js";
export { type DispatchRequest, type FetcherRun, type Job, SupervisorStorage } from "./storage.js";
export { type Supervisor, type SupervisorOptions, startSupervisor } from "./supervisor.js";
export type { TlsEndpoint } from "./tls-endpoint.js";
