import { describe, expect, it } from "vitest";
import { deferred, expectCode } from "../test/helpers.js";
import { pausable } from "./index.js";

/** A manual source: each pull waits for the test to settle it, and every call is logged. */
function manualSource<T>() {
  const log: string[] = [];
  const pulls: ReturnType<typeof deferred<IteratorResult<T>>>[] = [];
  let pending = 0;
  let maxPending = 0;
  let created = 0;
  const iterator: AsyncIterator<T> = {
    next(...args: unknown[]) {
      log.push(`next(${args.length})`);
      pending++;
      maxPending = Math.max(maxPending, pending);
      const pull = deferred<IteratorResult<T>>();
      pulls.push(pull);
      return pull.promise.finally(() => {
        pending--;
      });
    },
    async return(value?: unknown) {
      log.push(`return(${String(value)})`);
      return { done: true, value };
    },
  };
  const source: AsyncIterable<T> = {
    [Symbol.asyncIterator]() {
      created++;
      return iterator;
    },
  };
  return {
    source,
    iterator,
    log,
    pulls,
    get created() {
      return created;
    },
    get maxPending() {
      return maxPending;
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("pausable", () => {
  it("rejects anything but an async iterable", async () => {
    for (const source of [undefined, null, [1, 2], "text", { next() {} }]) {
      const error = await expectCode(() => pausable(source as never), "ERR_X_CHECKPOINT_INVALID_OPTION");
      expect(error.message).toContain("invalid option source");
    }
  });

  it("is its own async iterator, exposes source and paused, and creates the source iterator lazily", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    expect(stream[Symbol.asyncIterator]()).toBe(stream);
    expect(stream.source).toBe(manual.source);
    expect(stream.paused).toBe(false);
    expect(manual.created).toBe(0);
    const next = stream.next();
    expect(manual.created).toBe(1);
    manual.pulls[0]?.resolve({ done: false, value: 1 });
    expect(await next).toEqual({ done: false, value: 1 });
  });

  it("pulls strictly one at a time, one pull per next(), in call order, forwarding no argument", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    const results = [stream.next(), stream.next(), stream.next()];
    await tick();
    expect(manual.pulls).toHaveLength(1);
    manual.pulls[0]?.resolve({ done: false, value: 1 });
    await tick();
    manual.pulls[1]?.resolve({ done: false, value: 2 });
    await tick();
    manual.pulls[2]?.resolve({ done: false, value: 3 });
    expect(await Promise.all(results)).toEqual([
      { done: false, value: 1 },
      { done: false, value: 2 },
      { done: false, value: 3 },
    ]);
    expect(manual.maxPending).toBe(1);
    expect(manual.log).toEqual(["next(0)", "next(0)", "next(0)"]);
  });

  it("pauses before the first pull without touching the source; resume releases the waiting calls in order", async () => {
    async function* numbers() {
      yield 1;
      yield 2;
    }
    const stream = pausable(numbers());
    stream.pause();
    stream.pause();
    expect(stream.paused).toBe(true);
    const order: string[] = [];
    const first = stream.next().then((r) => order.push(`first ${String(r.value)}`));
    const second = stream.next().then((r) => order.push(`second ${String(r.value)}`));
    await tick();
    expect(order).toEqual([]);
    stream.resume();
    stream.resume();
    await Promise.all([first, second]);
    expect(order).toEqual(["first 1", "second 2"]);
  });

  it("a pull in flight at pause completes and is held until resume; nothing is dropped or duplicated", async () => {
    const manual = manualSource<string>();
    const stream = pausable(manual.source);
    let delivered: IteratorResult<string> | undefined;
    const first = stream.next().then((r) => {
      delivered = r;
    });
    const second = stream.next();
    stream.pause();
    manual.pulls[0]?.resolve({ done: false, value: "a" });
    await tick();
    expect(delivered).toBeUndefined();
    expect(manual.pulls).toHaveLength(1);
    stream.resume();
    await first;
    expect(delivered).toEqual({ done: false, value: "a" });
    await tick();
    expect(manual.pulls).toHaveLength(2);
    manual.pulls[1]?.resolve({ done: false, value: "b" });
    expect(await second).toEqual({ done: false, value: "b" });
  });

  it("holds an error or the end that arrives while paused, too", async () => {
    const manual = manualSource<string>();
    const stream = pausable(manual.source);
    const failing = stream.next();
    stream.pause();
    const failure = new Error("broken");
    manual.pulls[0]?.reject(failure);
    let settled = false;
    failing
      .catch(() => {})
      .finally(() => {
        settled = true;
      });
    await tick();
    expect(settled).toBe(false);
    stream.resume();
    await expect(failing).rejects.toBe(failure);

    const ending = stream.next();
    await tick();
    stream.pause();
    manual.pulls[1]?.resolve({ done: true, value: "ignored" });
    await tick();
    stream.resume();
    expect(await ending).toEqual({ done: true, value: undefined });
  });

  it("after the source is done, this and every later next() is done without pulling again", async () => {
    async function* one() {
      yield 1;
      return "result";
    }
    const stream = pausable(one());
    expect(await stream.next()).toEqual({ done: false, value: 1 });
    const [a, b] = await Promise.all([stream.next(), stream.next()]);
    expect(a).toEqual({ done: true, value: undefined });
    expect(b).toEqual({ done: true, value: undefined });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("an error from the source rejects that next() and does not end the stream", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    const failing = stream.next();
    manual.pulls[0]?.reject(new Error("transient"));
    await expect(failing).rejects.toThrow("transient");
    const next = stream.next();
    await tick();
    manual.pulls[1]?.resolve({ done: false, value: 2 });
    expect(await next).toEqual({ done: false, value: 2 });
  });

  it("return(value) closes the source, even while paused, and ends the waiting and later calls", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    const inFlight = stream.next();
    stream.pause();
    const waiting = stream.next();
    expect(await stream.return("bye")).toEqual({ done: true, value: "bye" });
    expect(manual.log).toEqual(["next(0)", "return(bye)"]);
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    manual.pulls[0]?.resolve({ done: false, value: 1 });
    expect(await inFlight).toEqual({ done: false, value: 1 });
  });

  it("return() before the first pull does not create the source iterator", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    expect(await stream.return()).toEqual({ done: true, value: undefined });
    expect(manual.created).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("break in for await closes a source generator, running its finally blocks", async () => {
    const log: string[] = [];
    async function* numbers() {
      try {
        for (let n = 0; ; n++) yield n;
      } finally {
        log.push("finally");
      }
    }
    const stream = pausable(numbers());
    for await (const n of stream) if (n === 2) break;
    expect(log).toEqual(["finally"]);
  });

  it("throw(err) forwards to the source's throw, ending the stream unless the result is not done", async () => {
    async function* resilient() {
      for (;;) {
        try {
          yield "item";
        } catch {
          yield "recovered";
        }
      }
    }
    const stream = pausable(resilient());
    await stream.next();
    expect(await stream.throw(new Error("x"))).toEqual({ done: false, value: "recovered" });
    expect(await stream.next()).toEqual({ done: false, value: "item" });

    async function* fragile() {
      yield 1;
    }
    const ended = pausable(fragile());
    await ended.next();
    const failure = new Error("fatal");
    await expect(ended.throw(failure)).rejects.toBe(failure);
    expect(await ended.next()).toEqual({ done: true, value: undefined });
  });

  it("throw(err) on a source without throw ends the stream like return() and rejects with err", async () => {
    const manual = manualSource<number>();
    const stream = pausable(manual.source);
    const first = stream.next();
    manual.pulls[0]?.resolve({ done: false, value: 1 });
    await first;
    const failure = new Error("stop");
    await expect(stream.throw(failure)).rejects.toBe(failure);
    expect(manual.log).toEqual(["next(0)", "return(undefined)"]);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });
});
