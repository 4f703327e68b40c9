import { MAX_DURATION_MS } from "@x/core/internal";

/**
 * One pending wait that ends at a deadline or as soon as {@link Alarm.ring} is called, whichever comes
 * first. A ring with nobody waiting is dropped: callers check their state before each wait, and JavaScript
 * runs that check and the start of the wait in one turn.
 */
export class Alarm {
  #ring: (() => void) | undefined;

  /** Ends the current wait, if any. */
  ring(): void {
    this.#ring?.();
  }

  /**
   * Waits `ms` milliseconds or until rung.
   *
   * @param ms - the longest wait, in ms (negative counts as 0)
   */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#ring = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(ms, MAX_DURATION_MS)));
      this.#ring = done;
    });
  }
}
