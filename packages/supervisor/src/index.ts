export { SupervisorClient } from "./client.js";
export { ErrorCode, SupervisorError } from "./errors.js";
export type { RejectEvent, RejectReason, SupervisorEvents, SupervisorStats } from "./events.js";
export type { HttpEndpoint } from "./http-endpoint.js";
export { jitterHash } from "./jitter-hash.js";
export { writeQueueHtml } from "./queue-html.js";
export {
  type FetcherCycle,
  type FetcherRunView,
  type FinishedJob,
  type QueueEntry,
  type QueueView,
  type QueueViewOptions,
  type RunningJob,
  readQueueView,
} from "./queue-view.js";
export { type RunWorkerLoopOptions, type RunWorkerOptions, runWorker } from "./run-worker.js";
export { type FetcherRunStatus, type QueueStatus, readQueueStatus, type UnfinishedJob } from "./status.js";
export { type DispatchRequest, type FetcherRun, type Job, SupervisorStorage } from "./storage.js";
export { type Supervisor, type SupervisorOptions, startSupervisor } from "./supervisor.js";
export type { TlsEndpoint } from "./tls-endpoint.js";
