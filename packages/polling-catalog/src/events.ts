/**
 * Why an agent woke up to drain: see `blockingPoll`'s timing model. `retry` is a drain retried during a
 * catalog outage.
 */
export type WakeReason = "start" | "rebind" | "notice" | "poll-timeout" | "retry";

/** Payload of the `wake` event, emitted just before each drain. */
export interface WakeEvent {
  /** Why this drain runs. */
  reason: WakeReason;
  /** How many change notices were coalesced into this wake; 0 unless `reason` is `"notice"`. */
  notices: number;
}

/** Payload of the `amqp` event: after each successful bind (`up`), after each failed bind or loss (`down`). */
export type AmqpEvent =
  | {
      state: "up";
      /** The address bound at, its password shown as `***`: with several addresses, the node in use. */
      url: string;
    }
  | {
      state: "down";
      /** What failed. */
      error: Error;
      /**
       * Milliseconds until the next bind attempt: about 5 s, 25 s, 125 s after successive failures (each drawn
       * ±50 % around that), never more than `maxBindDelayMs` (default 5 minutes); at that cap, drawn from
       * its lower half. With several addresses, a connection lost after 5 s or more up tries the next address
       * after 0.1–1 s instead.
       */
      retryInMs: number;
    };

/** Payload of the `outage` event: a drain failed because the catalog is unavailable; `blockingPoll` keeps going. */
export interface OutageEvent {
  /** What `lookForWork` threw: a network error, a timeout, or an `HTTPError` with status 502, 503 or 504. */
  error: Error;
  /** Milliseconds until the drain is retried (sooner if a change notice comes). */
  retryInMs: number;
}

/** Payload of the `recovered` event: a drain succeeded again after an outage. */
export interface RecoveredEvent {
  /** Milliseconds from the first failed drain to this success. */
  durationMs: number;
  /** How many drains failed in this outage. */
  failures: number;
}

/** Payload of the `claimed` event, emitted after each successful PUT of `stateChangeOnce`. */
export interface ClaimedEvent {
  /** The query that found the candidates. */
  queryPath: string;
  /** The path the updates were PUT to. */
  updatePath: string;
  /** The `[candidate, update]` pairs that were sent. */
  batch: Array<[candidate: Record<string, unknown>, update: Record<string, unknown>]>;
}

/** The typed events of `PollingErmrestCatalog`. It never emits `error`. */
export interface PollingCatalogEvents {
  wake: [WakeEvent];
  amqp: [AmqpEvent];
  claimed: [ClaimedEvent];
  outage: [OutageEvent];
  recovered: [RecoveredEvent];
}
