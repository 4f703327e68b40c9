// A consumer group of member processes on Redis, through a downtime of their dependency: 100 000 orders, 3
// members pricing them from a price stream that stalls; during the stall one member is SIGKILLed and a fourth
// joins; the prices come back. Every order must be handled, none skipped after the replay point, at most a
// batch per member handled while the group is paused, and the duplicates within the unacknowledged batches
// plus the replay. Prints the figures as one JSON line per run.
//
// Which member dies is chosen, not left to chance: either the one that paused the group (often the only
// member whose checkpoint is down, so the only one that would recover and resume the group; the entries it
// received and did not hand out are left for the others to take over), or another one.
//
// A services test of this package (Redis only, and it disturbs no service, so not a system test); it runs
// on Node 24, in the services tier, and is left out of the Node 22 and 26 legs: what it tests is the group's
// protocol over Redis, not the runtime.
import { requireService } from "@x/test-support/services";
import { testTempDir } from "@x/test-support/temp-dir";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { createClient } from "redis";
import { beforeAll, expect, it, onTestFinished, vi } from "vitest";
import type { MemberConfig } from "./group-member.js";
import { checkGroupRun, type GroupEvent } from "./group-run-check.js";
import { type Member, MemberLogs, startMember } from "./member-logs.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// 100 000 orders through four processes on a shared, loaded 2-core machine (about 10 s when idle): the waits
// below add up to less than this.
vi.setConfig({ testTimeout: 420_000 });

const ORDERS = 100_000;
/** Order i happened at BASE + i ms, its id `<BASE + i>-0`; a price every PRICE_EVERY orders, at the same clock. */
const BASE = Date.UTC(2025, 0, 1);
const PRICE_EVERY = 100;
const PRICES = ORDERS / PRICE_EVERY;
/** The prices stall after this one (at BASE + 40 000 ms): orders past BASE + 45 000 ms find them down. */
const LAST_BEFORE_STALL = 400;
const THRESHOLD_MS = 5_000;
const BATCH_SIZE = 100;
const CLAIM_IDLE_MS = 5_000;
const MEMBERS = 3;
/** A group that hands out no new order for this long after the prices came back is stuck. */
const STUCK_MS = 30_000;

const orderId = (i: number) => `${BASE + i}-0`;
const priceTime = (k: number) => BASE + k * PRICE_EVERY;
/** The order index of a stream id of the orders' clock. */
const indexOf = (id: string | undefined) => (id === undefined ? undefined : Number(id.split("-")[0]) - BASE);

async function connect() {
  const client = createClient({ url: REDIS_URL });
  client.on("error", () => {});
  await client.connect();
  return client;
}
type Admin = Awaited<ReturnType<typeof connect>>;

/** Adds entries `from` to `to` − 1 of a stream, with the ids and fields `entry` gives, pipelined by thousands. */
async function add(
  admin: Admin,
  key: string,
  from: number,
  to: number,
  entry: (n: number) => [string, Record<string, string>],
) {
  for (let start = from; start < to; start += 5_000) {
    const writes = [];
    for (let n = start; n < Math.min(to, start + 5_000); n++) writes.push(admin.xAdd(key, ...entry(n)));
    await Promise.all(writes);
  }
}

beforeAll(() => requireService("Redis", REDIS_URL));

/** Who dies during the stall: given the member that paused the group first, and the members running. */
const victims = {
  "the member that paused the group": (pauser: string) => pauser,
  "a member other than the one that paused the group": (pauser: string, running: string[]) =>
    running.find((name) => name !== pauser)!,
};

it.for(Object.entries(victims))(
  "3 members, prices stalled, %s killed and a member joining: every order handled once the prices recover, none skipped after the replay",
  async ([, victimOf]) => {
    const run = uniqueName("group");
    const dir = testTempDir("x-checkpoint-group-");
    const admin = await connect();
    onTestFinished(async () => {
      const keys: string[] = [];
      for await (const found of admin.scanIterator({ MATCH: `${run}:*`, COUNT: 1_000 })) keys.push(...found);
      if (keys.length > 0) await admin.del(keys);
      admin.destroy();
    });
    const ordersKey = `${run}:orders`;
    const pricesKey = `${run}:prices`;
    const group = "pricing";
    const startedAt = Date.now();
    await add(admin, ordersKey, 0, ORDERS, (i) => [orderId(i), { i: String(i) }]);
    const addPrices = (from: number, to: number) =>
      add(admin, pricesKey, from, to, (k) => [`${priceTime(k)}-0`, { price: String(100 + k) }]);
    await addPrices(0, LAST_BEFORE_STALL + 1);

    const logs = new MemberLogs(dir);
    const config = (consumer: string): MemberConfig => ({
      url: REDIS_URL,
      ordersKey,
      pricesKey,
      group,
      consumer,
      cachePrefix: `${run}:pricing`,
      logFile: logs.fileOf(consumer),
      batchSize: BATCH_SIZE,
      claimIdleMs: CLAIM_IDLE_MS,
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
    // group: no member logs it, so the test watches the flag and reads the replay point from Redis.
    const pausedKey = `${ordersKey}:${group}:paused`;
    let liftedAt: number | undefined;
    const flagWatch = setInterval(() => {
      void admin.get(pausedKey).then((flag) => {
        if (flag === null) liftedAt ??= Date.now();
      });
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
    await addPrices(LAST_BEFORE_STALL + 1, PRICES);

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
    const pending = async () => (await admin.xPending(ordersKey, group)).pending;
    // the members acknowledge their last batches at their next reads, and take over the dead one's: the
    // figure below is asserted, whether this wait ends in time or not
    if (finished === undefined)
      await waitFor(async () => (await pending()) === 0, 4 * CLAIM_IDLE_MS, "nothing pending").catch(
        () => {},
      );
    const pendingAtEnd = await pending();
    const pausedBy = await admin.get(pausedKey); // the group's pause flag, for the figures
    clearInterval(flagWatch);
    logs.poll(members.keys());
    const replay = await admin.hGetAll(`${ordersKey}:${group}:replay`);
    const lapsed = liftedAt !== undefined && !logs.events.some((event) => event.kind === "resumed");
    const lapseEvents: GroupEvent[] =
      lapsed && replay.id !== undefined
        ? [
            { kind: "seek", member: "(lapse)", at: liftedAt!, id: replay.id },
            { kind: "resumed", member: "(lapse)", at: liftedAt! },
          ]
        : [];

    const check = checkGroupRun({
      ids: Array.from({ length: ORDERS }, (_, i) => orderId(i)),
      handlings: logs.handlings,
      events: [...logs.events, ...lapseEvents],
      members: MEMBERS,
      batchSize: BATCH_SIZE,
    });
    const { figures } = check;
    const [firstPause] = figures.pauses;
    console.log(
      JSON.stringify({
        test: "redis-group-members",
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
  },
);
