/** How long {@link waitFor} waits between two checks, in milliseconds. */
const POLL_INTERVAL_MS = 20;

/**
 * Polls `check` (synchronous or asynchronous) until it returns a truthy value, and returns that value.
 *
 * @param check - the condition; checked at once, then every 20 ms after the previous check settled.
 * @param timeoutMs - how long to keep polling, in milliseconds (default 20 000: generous, the test
 *   machines are shared and noisy).
 * @param what - what the test waits for, named in the timeout error.
 * @throws Error `timed out after <timeoutMs> ms waiting for <what>` once the deadline has passed;
 *   an error thrown by `check` propagates at once.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
