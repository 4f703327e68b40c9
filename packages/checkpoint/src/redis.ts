/**
 * `@x/checkpoint/redis`: a Redis stream as the pausable, seekable dependent of a `Checkpoint`, and a cache in
 * Redis that several processes share, both through node-redis clients that you create and pass in (`redis`
 * is an optional peer dependency).
 */
export type { BrokerStream } from "./engines/broker-stream.js";
export { idAt } from "./engines/redis-ids.js";
export {
  type RedisCommandClient,
  type RedisGroupOptions,
  type RedisStreamOptions,
  type RedisStreamRecord,
  type RedisStreamStart,
  redisStream,
} from "./engines/redis-stream.js";
export type { StreamOptions } from "./engines/stream-options.js";
export { RedisCache, type RedisCacheOptions } from "./redis-cache.js";
