/**
 * `@x/checkpoint/rabbitmq-stream`: a RabbitMQ stream queue as the pausable, seekable dependent of a
 * `Checkpoint`, through amqplib connections that you open for it (`amqplib` is an optional peer dependency).
 */
export type { BrokerStream } from "./engines/broker-stream.js";
export {
  type AmqpStreamChannel,
  type AmqpStreamConnection,
  type AmqpStreamMessage,
  type RabbitmqStreamOptions,
  type RabbitmqStreamStart,
  rabbitmqStream,
  streamOffsetOf,
} from "./engines/rabbitmq-stream.js";
export type { StreamOptions } from "./engines/stream-options.js";
