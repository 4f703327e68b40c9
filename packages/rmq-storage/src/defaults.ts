/**
 * The default sizes of a write's path, shared by the client, the server and the CLI's help: messages of
 * {@link DEFAULT_ITEMS_PER_MESSAGE} items, merged by the server into storage calls of up to
 * {@link DEFAULT_MAX_ITEMS_PER_WRITE} items, with a prefetch that follows (see {@link defaultPrefetch}).
 */

/** The client's default `itemsPerMessage` (swh-provenance's `batch_size` was 100). */
export const DEFAULT_ITEMS_PER_MESSAGE = 1_000;

/** The server's default `maxItemsPerWrite` (swh-provenance's `batch_size` was 100). */
export const DEFAULT_MAX_ITEMS_PER_WRITE = 10_000;

/**
 * The server's default `prefetch` for a `maxItemsPerWrite`: room for two full storage calls of default-sized
 * messages (one being written, the next one gathering), so that a queue never waits on the broker between
 * two writes, while what a server holds per queue stays about 2 × `maxItemsPerWrite` items. 20 messages for
 * the default 10 000 items.
 */
export const defaultPrefetch = (maxItemsPerWrite: number): number =>
  Math.min(65_535, 2 * Math.ceil(maxItemsPerWrite / DEFAULT_ITEMS_PER_MESSAGE));

/**
 * The server's default `maxConcurrentWrites`: storage calls in flight at once across its queues. A queue
 * waiting for a slot gathers its deliveries into one larger write, so that a storage that cannot keep up
 * commits fewer, larger transactions; an idle one still writes each delivery at once.
 */
export const DEFAULT_MAX_CONCURRENT_WRITES = 4;
