// Streams of numbered records `{ i }`, as the tests and benchmarks fill them: written 1 000 at a time, so
// that a large count neither waits for each write nor queues them all at once.

const WRITES_AT_ONCE = 1_000;

/** Writes `count` numbered records, from `from` on, `WRITES_AT_ONCE` at a time. */
async function inBatches(count: number, from: number, write: (index: number) => Promise<unknown>) {
  for (let start = from; start < from + count; start += WRITES_AT_ONCE) {
    const writes = [];
    for (let index = start; index < Math.min(from + count, start + WRITES_AT_ONCE); index++)
      writes.push(write(index));
    await Promise.all(writes);
  }
}

/** Appends entries `{ i: "<index>" }` for indices `from` to `from + count - 1` to a Redis stream. */
export function addRedisEntries(
  client: { xAdd(key: string, id: string, fields: Record<string, string>): Promise<unknown> },
  key: string,
  count: number,
  from = 0,
): Promise<void> {
  return inBatches(count, from, (index) => client.xAdd(key, "*", { i: String(index) }));
}

/** Publishes messages `{"i":<index>}` for indices `from` to `from + count - 1` to a JetStream subject. */
export function publishNatsMessages(
  js: { publish(subject: string, data: string): Promise<unknown> },
  subject: string,
  count: number,
  from = 0,
): Promise<void> {
  return inBatches(count, from, (index) => js.publish(subject, JSON.stringify({ i: index })));
}
