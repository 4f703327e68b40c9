/**
 * Serialises calls: they run one at a time, in call order, whether each fulfils or rejects. A call takes
 * the lock with {@link CallLock.acquire} and hands it on with {@link CallLock.release}, in a `finally`.
 *
 * @example
 * ```ts
 * const turn = lock.acquire();
 * if (turn) await turn;
 * try {
 *   // … the call's work
 * } finally {
 *   lock.release();
 * }
 * ```
 */
export class CallLock {
  #busy = false;
  readonly #waiting: (() => void)[] = [];

  /**
   * Takes the lock. A free lock is taken at once and `undefined` is returned, so the caller goes on without
   * yielding; a busy one returns a promise that resolves when the caller's turn comes.
   */
  acquire(): Promise<void> | undefined {
    if (!this.#busy) {
      this.#busy = true;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the lock to the longest-waiting caller, or frees it when none waits. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }
}
