/**
 * `@x/checkpoint/nats`: a NATS JetStream stream as the pausable, seekable dependent of a `Checkpoint`,
 * through a `@nats-io/jetstream` client that you create and pass in (an optional peer dependency).
 */
export type { BrokerStream } from "./engines/broker-stream.js";
export type { NatsGroupManager } from "./engines/nats-group.js";
export {
  type NatsConsumerMessages,
  type NatsGroupOptions,
  type NatsJetStream,
  type NatsStreamMessage,
  type NatsStreamOptions,
  type NatsStreamStart,
  natsStream,
} from "./engines/nats-stream.js";
export type { StreamOptions } from "./engines/stream-options.js";
