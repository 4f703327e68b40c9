import { AsyncLocalStorage } from "node:async_hooks";

/** The signal of the `blockingPoll` whose `lookForWork` is running, for the waits of the requests it makes. */
const pollSignal = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` so that every wait a request it makes (write pacing, retries after a rolled-back transaction,
 * a network error or a server error) ends when `signal` aborts; see {@link waitSignal}.
 *
 * @param signal - the `blockingPoll`'s signal; `undefined` runs `work` as it is
 * @param work - `lookForWork`
 */
export function withPollSignal<T>(signal: AbortSignal | undefined, work: () => T): T {
  return signal === undefined ? work() : pollSignal.run(signal, work);
}

/**
 * The signal that ends a request's waits: the request's own `signal`, and the signal of the `blockingPoll`
 * whose `lookForWork` made the request, so that stopping an agent never waits for a pacing gap or a retry.
 *
 * @param own - the request's `signal` option
 */
export function waitSignal(own: AbortSignal | undefined): AbortSignal | undefined {
  const poll = pollSignal.getStore();
  if (poll === undefined || poll === own) return own;
  return own === undefined ? poll : AbortSignal.any([own, poll]);
}
