/**
 * A runnable tour of every form, with limits short enough to watch them act:
 *   node --import tsx --conditions=@x/source examples/tour.ts      (from packages/process-guard)
 * or, against the build: npx tsx examples/tour.ts
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import {
  currentSignal,
  type ExecutionTimeout,
  type GuardError,
  memGuard,
  progress,
  progressLoop,
  runSync,
  timeGuard,
} from "@x/process-guard";

const say = (...parts: unknown[]) => console.log("•", ...parts);

// run(): the task passes its signal down and rejects with the guard's error
const guard = timeGuard({ timeoutMs: 200, gracePeriodMs: 200, checkIntervalMs: 20 });
guard.on("interrupt", ({ level, action }) => say(`  interrupt level ${level}: ${action}`));
try {
  await guard.run(({ signal }) => sleep(5_000, undefined, { signal }));
} catch (error) {
  say("run():", (error as Error).name, `after ${Math.round((error as ExecutionTimeout).elapsedMs)} ms`);
}

// progress() keeps a loop of unknown length alive, each step within the limit
const steps = await guard.run(async () => {
  let n = 0;
  for (const _ of progressLoop(Array.from({ length: 5 }))) {
    await sleep(100);
    n++;
  }
  return n;
});
say("progressLoop: finished", steps, "steps of 100 ms under a 200 ms limit");

// wrap(): the decorator form; currentSignal() reaches the call's signal
const slowly = guard.wrap(async (ms: number) => {
  await sleep(ms, undefined, { signal: currentSignal() });
  progress();
  return ms;
});
say("wrap():", await slowly(50), await slowly(300).catch((e: GuardError) => e.code));

// enter(): the context-manager form
{
  using active = guard.enter();
  await sleep(150);
  active.progress();
  await sleep(150);
  say("enter(): still live after 300 ms with one progress():", !active.signal.aborted);
}

// memGuard: a limit of 1 KiB of RSS fires at the first check
const memory = memGuard({ maxMemoryBytes: 1024, checkIntervalMs: 20 });
const reason = await memory.run(async ({ signal }) => {
  while (!signal.aborted) await sleep(10);
  return signal.reason;
});
say("memGuard:", reason.message);

// watch(): a child in its own process group, SIGINT at the limit
const child = spawn("sh", ["-c", "trap 'exit 130' INT; while :; do sleep 0.05; done"], { detached: true });
const result = await guard.watch(child);
say("watch():", `exit code ${result.code}, guard level ${result.error?.level}`);

// runSync(): the one hard interrupt of a synchronous busy loop
try {
  runSync(
    () => {
      while (true) {}
    },
    { timeoutMs: 200 },
  );
} catch (error) {
  say("runSync():", (error as Error).name, "— and the event loop is fine:", await Promise.resolve("yes"));
}
