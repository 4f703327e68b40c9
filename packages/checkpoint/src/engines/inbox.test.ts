import { describe, expect, it } from "vitest";
import { Inbox } from "./inbox.js";

describe("Inbox", () => {
  it("hands a waiting read everything pushed, in order", async () => {
    const inbox = new Inbox<number>();
    const read = inbox.take();
    inbox.push(1);
    inbox.push(2);
    expect(await read).toEqual([1, 2]);
    inbox.push(3);
    expect(inbox.size).toBe(1);
    expect(await inbox.take()).toEqual([3]);
  });

  it("once ended, hands out what is left, then rejects with the first reason", async () => {
    const inbox = new Inbox<number>();
    inbox.push(1);
    inbox.end(new Error("first"));
    inbox.end(new Error("second"));
    expect(inbox.ended).toBe(true);
    expect(await inbox.take()).toEqual([1]);
    await expect(inbox.take()).rejects.toThrow("first");
  });

  it("ends a read that waits", async () => {
    const inbox = new Inbox<number>();
    const read = inbox.take();
    inbox.end(new Error("closed"));
    await expect(read).rejects.toThrow("closed");
  });

  it("lets a writer wait for the next take, or the end", async () => {
    const inbox = new Inbox<number>();
    inbox.push(1);
    let room = false;
    const waiting = inbox.taken().then(() => {
      room = true;
    });
    await Promise.resolve();
    expect(room).toBe(false);
    await inbox.take();
    await waiting;
    expect(room).toBe(true);
    const atEnd = inbox.taken();
    inbox.end(new Error("closed"));
    await atEnd;
    await inbox.taken(); // an ended inbox has room at once
  });
});
