/** Why an agent woke up to drain: see `blockingPoll`'s timing model. */
export type WakeReason = "start" | "rebind" | "notice" | "poll-timeout";

/** Payload of the `wake` event, emitted just before each drain. */
export interface WakeEvent {
  /** Why this drain runs. */
  reason: WakeReason;
  /** How many change notices were coalesced into this wake; 0 unless `reason` is `"notice"`. */
  notices: number;
}

/** Payload of the `amqp` event: after each successful bind (`up`), after each failed bind or loss (`down`). */
export type AmqpEvent =
  | { state: "up" }
  | {
      state: "down";
      /** What failed. */
      error: Error;
      /**
       * Milliseconds until the next bind attempt: `5_000`, `25_000`, `125_000`, `625_000`, `3_125_000`, then
       * `15_625_000` after successive failures.
       */
      retryInMs: number;
    };

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
}
