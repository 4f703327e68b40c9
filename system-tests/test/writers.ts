import { createHash } from "node:crypto";
import type { RmqStorageClient } from "@x/rmq-storage";
import { waitFor } from "@x/test-support/wait-for";
import { WriteHistory } from "@x/test-support/write-checker";
import { onTestFinished } from "vitest";

/** One write call's outcome, for recovery times. */
interface Attempt {
  client: number;
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

/**
 * Writers in the manner of a Jepsen client: `items` contents (unique ids, each with its own date), cut into
 * calls of `itemsPerCall`, taken in turn by every client, `perClient` calls in flight per client. A call that
 * resolves `false` is sent again, as callers of the seed's contract do, until it resolves `true`; every item
 * is recorded in the history before it is sent and as confirmed when its call resolves `true`.
 */
export class Writers {
  readonly history = new WriteHistory<bigint>();
  readonly attempts: Attempt[] = [];
  readonly items: number;
  #next = 0;
  #confirmed = 0;
  readonly #calls: Array<Map<string, bigint>> = [];
  readonly done: Promise<void>;

  constructor(
    clients: readonly RmqStorageClient[],
    options: { items: number; itemsPerCall: number; perClient: number; tag: string },
  ) {
    this.items = options.items;
    for (let start = 0; start < options.items; start += options.itemsPerCall) {
      const call = new Map<string, bigint>();
      for (let i = start; i < Math.min(options.items, start + options.itemsPerCall); i++)
        call.set(
          createHash("sha1").update(`${options.tag}/${i}`).digest("hex"),
          1_700_000_000_000_000n + BigInt(i),
        );
      this.#calls.push(call);
    }
    this.done = Promise.all(
      clients.flatMap((client, c) => Array.from({ length: options.perClient }, () => this.#run(client, c))),
    ).then(() => {});
  }

  /** Items confirmed so far. */
  get confirmed(): number {
    return this.#confirmed;
  }

  async #run(client: RmqStorageClient, c: number): Promise<void> {
    for (;;) {
      const call = this.#calls[this.#next++];
      if (!call) return;
      for (const [key, value] of call) this.history.sent(key, value);
      for (;;) {
        const startedAt = performance.now();
        const ok = await client.contentAdd(call);
        this.attempts.push({ client: c, startedAt, endedAt: performance.now(), ok });
        if (ok) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      this.history.confirmed(call.keys());
      this.#confirmed += call.size;
    }
  }

  /**
   * How long after `faultAt` (a `performance.now()`) each client had a call confirmed that it started after
   * the fault, the longest of them, in ms: the time for every writer (of `clients`, default all) to make
   * progress again. Clients that started no call after the fault are left out.
   */
  recoveryMs(faultAt: number, clients?: readonly number[]): number {
    const firsts = new Map<number, number>();
    for (const a of this.attempts)
      if (a.ok && a.startedAt >= faultAt && (clients?.includes(a.client) ?? true))
        firsts.set(a.client, Math.min(firsts.get(a.client) ?? a.endedAt, a.endedAt));
    return Math.max(...[...firsts.values()].map((endedAt) => endedAt - faultAt));
  }

  /** How long after `at` the first call of one of `clients` resolved `true`, whenever it started, in ms. */
  firstConfirmedMs(at: number, clients: readonly number[]): number {
    const ends = this.attempts
      .filter((a) => a.ok && a.endedAt >= at && clients.includes(a.client))
      .map((a) => a.endedAt - at);
    return Math.min(...ends);
  }

  /** Logs the progress every `everyMs` until the writers are done (for a run that stalls). */
  progress(label: string, everyMs = 15_000): void {
    const timer = setInterval(() => {
      const failed = this.attempts.filter((a) => !a.ok).length;
      console.log(
        `[${label}] ${this.#confirmed}/${this.items} confirmed, ${failed} calls resolved false so far`,
      );
    }, everyMs);
    void this.done.finally(() => clearInterval(timer));
    onTestFinished(() => clearInterval(timer));
  }

  /** Resolves once `n` items are confirmed. */
  async reach(n: number, timeoutMs = 300_000): Promise<void> {
    await waitFor(() => this.#confirmed >= n, timeoutMs, `${n} items confirmed`);
  }
}
