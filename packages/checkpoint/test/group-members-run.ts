// A consumer group of member processes through a downtime of their dependency, on one broker: 100 000 orders,
// 3 members pricing them from a price stream that stalls; during the stall one member is SIGKILLed and a
// fourth joins; the prices come back. Every order must be handled, none skipped after the replay point, at
// most a batch per member handled while the group is paused, and the duplicates within the unacknowledged
// batches plus the replay. Prints the figures as one JSON line per run. The broker's side is a
// {@link GroupBroker}: redis-group-members and nats-group-members.services.test.ts.
//
// Which member dies is chosen, not left to chance: either the one that paused the group (often the only
// member whose checkpoint is down, so the only one that would recover and resume the group; the records it
// received and did not hand out are left for the others to take over), or another one.
import { testTempDir } from "@x/test-support/temp-dir";
import { waitFor } from "@x/test-support/wait-for";
import { expect, onTestFinished } from "vitest";
import type { MemberConfig } from "./group-member.js";
import { checkGroupRun, type GroupEvent } from "./group-run-check.js";
import { type Member, MemberLogs, startMember } from "./member-logs.js";

export const ORDERS = 100_000;
/** Order i happened at BASE + i ms; a price every PRICE_EVERY orders, at the same clock. */
const BASE = Date.UTC(2025, 0, 1);
const PRICE_EVERY = 100;
const PRICES = ORDERS / PRICE_EVERY;
/** The prices stall after this one (at BASE + 40 000 ms): orders past BASE + 45 000 ms find them down. */
const LAST_BEFORE_STALL = 400;
const THRESHOLD_MS = 5_000;
const BATCH_SIZE = 100;
/** How long a dead member's unacknowledged records wait before another member gets them. */
const REDELIVER_MS = 5_000;
const MEMBERS = 3;
/** A group that hands out no new order for this long after the prices came back is stuck. */
const STUCK_MS = 30_000;

/** When order `i` happened, in ms. */
export const orderTime = (i: number) => BASE + i;
/** When price `k` was quoted, in ms. */
export const priceTime = (k: number) => BASE + k * PRICE_EVERY;

/** A broker holding one run's streams, as the scenario drives and inspects it. */
export interface GroupBroker {
  /** The name printed in the figures line. */
  readonly test: string;
  /** The broker's fields of each member's config. */
  readonly member: Pick<MemberConfig, "engine" | "url" | "orders" | "prices" | "group" | "cachePrefix">;
  /** Adds orders `from` to `to` − 1 (order i at {@link orderTime}). */
  addOrders(from: number, to: number): Promise<void>;
  /** Adds prices `from` to `to` − 1 (price k at {@link priceTime}). */
  addPrices(from: number, to: number): Promise<void>;
  /** The check's id of order `i` (what the members log). */
  orderId(i: number): string;
  /** Whether the group's pause flag is set and live now (false once a resume cleared it or it lapsed). */
  paused(): Promise<boolean>;
  /** The group's pause flag, for the figures; null when none. */
  flag(): Promise<string | null>;
  /** The check's id of where the group last replayed from; undefined when it never did. */
  replayPoint(): Promise<string | undefined>;
  /** Orders delivered to a member and not acknowledged. */
  pending(): Promise<number>;
}

/** Who dies during the stall: given the member that paused the group first, and the members running. */
export const victims = {
  "the member that paused the group": (pauser: string) => pauser,
  "a member other than the one that paused the group": (pauser: string, running: string[]) =>
    running.find((name) => name !== pauser)!,
};

/** Runs the scenario on `broker`, killing the member `victimOf` names; asserts the check, prints the figures. */
export async function runGroupMembers(
  broker: GroupBroker,
  victimOf: (pauser: string, running: string[]) => string,
): Promise<void> {
  const dir = testTempDir("x-checkpoint-group-");
  const startedAt = Date.now();
  await broker.addOrders(0, ORDERS);
  await broker.addPrices(0, LAST_BEFORE_STALL + 1);
  const ids = Array.from({ length: ORDERS }, (_, i) => broker.orderId(i));
  const indexById = new Map(ids.map((id, i) => [id, i]));
  const indexOf = (id: string | undefined) => (id === undefined ? undefined : indexById.get(id));

  const logs = new MemberLogs(dir);
  const config = (consumer: string): MemberConfig => ({
    ...broker.member,
    consumer,
    logFile: logs.fileOf(consumer),
    batchSize: BATCH_SIZE,
    redeliverMs: REDELIVER_MS,
    downtimeThresholdMs: THRESHOLD_MS,
  });
  const members = new Map<string, Member>();
  const start = (name: string) => members.set(name, startMember(config(name)));
  let killed: string | undefined;
  const running = () => [...members.keys()].filter((name) => name !== killed);
  /** Waits for `done`, reading the logs, and fails at once when a member that should run has exited. */
  const watch = <T>(what: string, timeoutMs: number, done: () => T) =>
    waitFor(
      () => {
        for (const name of running()) {
          const { child } = members.get(name)!;
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(
              `${name} exited (${child.exitCode ?? child.signalCode}) while the test waited for ${what}`,
            );
        }
        logs.poll(members.keys());
        return done();
      },
      timeoutMs,
      what,
    );

  for (let n = 1; n <= MEMBERS; n++) start(`member-${n}`);
  const produced = Date.now();
  const down = await watch("a member to pause the group", 120_000, () =>
    logs.events.find((event) => event.kind === "down"),
  );
  // The stall: a member dies, a new one joins.
  killed = victimOf(down.member, running());
  const victim = members.get(killed)!;
  victim.child.kill("SIGKILL");
  await victim.exited;
  const killedAt = Date.now();
  // When the pause lapses (every member that kept it died), the member that sees it first replays the
  // group: no member logs it, so the test watches the flag and reads the replay point from the broker.
  let liftedAt: number | undefined;
  const flagWatch = setInterval(() => {
    void broker.paused().then(
      (paused) => {
        if (!paused) liftedAt ??= Date.now();
      },
      () => {},
    );
  }, 20);
  onTestFinished(() => clearInterval(flagWatch));
  start(`member-${MEMBERS + 1}`);
  await watch("the new member to read the prices, and every running member paused", 60_000, () =>
    running().every((name) => {
      const state = logs.members.get(name);
      return state?.paused && state.lastPrice === priceTime(LAST_BEFORE_STALL);
    }),
  );
  const resumedPricesAt = Date.now();
  await broker.addPrices(LAST_BEFORE_STALL + 1, PRICES);

  let progress = { handled: 0, at: Date.now() };
  const finished = await watch("every order to be handled", 180_000, () => {
    const handled = logs.handled.size;
    if (handled === ORDERS) return true;
    if (handled !== progress.handled) progress = { handled, at: Date.now() };
    else if (Date.now() - progress.at > STUCK_MS)
      throw new Error(`no new order handled for ${STUCK_MS} ms, ${handled} of ${ORDERS} handled`);
    return undefined;
  }).then(
    () => undefined,
    (error: Error) => error.message,
  );
  // the members acknowledge their last batches at their next reads, and get the dead one's: the figure
  // below is asserted, whether this wait ends in time or not
  if (finished === undefined)
    await waitFor(async () => (await broker.pending()) === 0, 4 * REDELIVER_MS, "nothing pending").catch(
      () => {},
    );
  const pendingAtEnd = await broker.pending();
  const pausedBy = await broker.flag();
  clearInterval(flagWatch);
  logs.poll(members.keys());
  const replayPoint = await broker.replayPoint();
  const lapsed = liftedAt !== undefined && !logs.events.some((event) => event.kind === "resumed");
  const lapseEvents: GroupEvent[] =
    lapsed && replayPoint !== undefined
      ? [
          { kind: "seek", member: "(lapse)", at: liftedAt!, id: replayPoint },
          { kind: "resumed", member: "(lapse)", at: liftedAt! },
        ]
      : [];

  const check = checkGroupRun({
    ids,
    handlings: logs.handlings,
    events: [...logs.events, ...lapseEvents],
    members: MEMBERS,
    batchSize: BATCH_SIZE,
  });
  const { figures } = check;
  const [firstPause] = figures.pauses;
  console.log(
    JSON.stringify({
      test: broker.test,
      orders: ORDERS,
      members: MEMBERS,
      batchSize: BATCH_SIZE,
      thresholdMs: THRESHOLD_MS,
      lastPriceAtOrder: LAST_BEFORE_STALL * PRICE_EVERY,
      pauser: down.member,
      killed,
      downMembers: [...new Set(logs.events.filter((e) => e.kind === "down").map((e) => e.member))],
      detectedAtOrder: indexOf(figures.detectedAt),
      seeks: [...logs.events, ...lapseEvents]
        .filter((e) => e.kind === "seek")
        .map((e) => `${e.member}@${indexOf(e.id)}`),
      replayFromOrder: indexOf(figures.replayPoint),
      handlings: figures.handlings,
      missing: figures.missing,
      duplicates: figures.duplicates,
      duplicateBound: figures.duplicateBound,
      replayedSpan: figures.replayedSpan,
      skippedAfterReplay: figures.skippedAfterReplay,
      staleNotReplayed: figures.staleNotReplayed,
      handledWhilePaused: firstPause?.handled,
      pausedBound: figures.pausedBound,
      pauseLatencyMs: firstPause?.latencyMs,
      pauseEpisodes: figures.pauses.length,
      handledSeenPaused: figures.handledSeenPaused,
      pendingAtEnd,
      pausedByAtEnd: pausedBy,
      produceMs: produced - startedAt,
      firstPauseMs: firstPause ? firstPause.from - produced : undefined,
      killToPricesMs: resumedPricesAt - killedAt,
      recoveryToEndMs: Date.now() - resumedPricesAt,
    }),
  );
  expect({ finished, failures: check.failures, pendingAtEnd }).toEqual({
    finished: undefined,
    failures: [],
    pendingAtEnd: 0,
  });
}
