export {
  type ClientEvents,
  RmqStorageClient,
  type RmqStorageClientOptions,
  type WaitForServerOptions,
} from "./client.js";
export { ErrorCode, RmqStorageError } from "./errors.js";
export { MAX_TIMESTAMP, MIN_TIMESTAMP } from "./input.js";
export {
  openPostgresStorage,
  type PostgresStorage,
  type PostgresStorageOptions,
} from "./postgres-storage.js";
export {
  type MetricsEndpoint,
  RmqStorageServer,
  type RmqStorageServerOptions,
  type ServerEvents,
} from "./server.js";
export {
  openSqliteStorage,
  SQLITE_SCHEMA_VERSION,
  type SqliteStorage,
  type SqliteStorageOptions,
} from "./sqlite-storage.js";
export { type DeletedTopology, type DeleteTopologyOptions, deleteTopology } from "./teardown.js";
export {
  type DirectoryData,
  EntityType,
  type Path,
  type ProvenanceResult,
  type ProvenanceStorage,
  type RelationData,
  RelationType,
  type RevisionData,
  type Sha1,
  type Timestamp,
} from "./types.js";
