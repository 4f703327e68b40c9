import { Backoff, type Logger, sleep } from "@x/core";
import type { Channel, ConsumeMessage } from "amqplib";
import { bytesKey } from "./bytes.js";
import type { InFlightWindow } from "./in-flight.js";
import { resolveDates, resolveDirectory, resolveRelation, resolveRevision } from "./resolve.js";
import type { Item, QueueSpec } from "./routing.js";
import type { Path, ProvenanceStorage, RelationType, Sha1, Timestamp } from "./types.js";
import { decodeRequest, encodeReply } from "./wire.js";

/** The server's events, for metrics. */
export interface ServerEvents {
  /** A batch was committed, replied to and acknowledged; `durationMs` is the storage call's duration, in ms. */
  batch: [{ queue: string; messages: number; items: number; durationMs: number }];
  /** A batch could not be written; its messages are requeued after a backoff. `attempt` counts from 1. */
  "storage-error": [{ queue: string; error: unknown; attempt: number }];
  /** An invalid request was rejected to the dead-letter queue. */
  "dead-letter": [{ queue: string; reason: string }];
  /** The broker connection was lost; the next attempt starts after `delayMs` ms. */
  reconnect: [{ attempt: number; delayMs: number }];
}

/** What a worker needs from its server. */
export interface WorkerContext {
  storage: ProvenanceStorage;
  maxItemsPerWrite: number;
  /**
   * The server's storage calls in flight, one unit each, shared by its queues (`maxConcurrentWrites`): a
   * queue takes its unit before it forms a batch and gives it back once the storage call is over.
   */
  writes: InFlightWindow;
  logger: Logger;
  emit: <K extends keyof ServerEvents>(event: K, ...payload: ServerEvents[K]) => void;
  /** Whether acknowledgements may still go out on this channel. */
  isOpen: (channel: Channel) => boolean;
}

interface Delivery {
  channel: Channel;
  message: ConsumeMessage;
  items: Item[];
  callId: string;
  messageId: string;
  replyTo: string;
}

/** The backoff before a failed batch is requeued: 100 ms, ×2, at most 10 s, ±20 %. */
const storageBackoff = () => new Backoff({ initialMs: 100, factor: 2, maxMs: 10_000, jitter: 0.2 });

/**
 * Serves one queue: validates each delivery on arrival (invalid ones are answered and dead-lettered),
 * writes whole messages in batches of at most `maxItemsPerWrite` items strictly one after another, each when
 * one of the server's write slots is free, and only after the commit publishes the replies and acknowledges;
 * on a storage failure it requeues the batch after a backoff.
 */
export class QueueWorker {
  readonly #spec: QueueSpec;
  readonly #queue: string;
  readonly #ctx: WorkerContext;
  readonly #backoff = storageBackoff();
  readonly #retry = new AbortController();
  #pending: Delivery[] = [];
  #running: Promise<void> | null = null;
  #stopping = false;

  constructor(spec: QueueSpec, queue: string, ctx: WorkerContext) {
    this.#spec = spec;
    this.#queue = queue;
    this.#ctx = ctx;
  }

  /** Handles one delivery from `channel`. */
  receive(channel: Channel, message: ConsumeMessage): void {
    const { correlationId, messageId, replyTo } = message.properties as unknown as Record<string, unknown>;
    const decoded = decodeRequest(message.content, this.#spec.method, this.#spec.relation, this.#spec.range);
    const missing = [
      typeof correlationId === "string" && correlationId ? null : "correlationId",
      typeof messageId === "string" && messageId ? null : "messageId",
      typeof replyTo === "string" && replyTo ? null : "replyTo",
    ].filter((name) => name !== null);
    if (!decoded.ok || missing.length > 0) {
      const reason = decoded.ok ? `missing ${missing.join(", ")}` : decoded.reason;
      this.#ctx.logger.warn({ queue: this.#queue, reason, messageId }, "invalid request dead-lettered");
      if (missing.length === 0)
        channel.sendToQueue(replyTo as string, encodeReply(false, [messageId as string], reason), {
          correlationId: correlationId as string,
          contentType: "application/json",
          persistent: false,
        });
      channel.nack(message, false, false);
      this.#ctx.emit("dead-letter", { queue: this.#queue, reason });
      return;
    }
    this.#pending.push({
      channel,
      message,
      items: decoded.items,
      callId: correlationId as string,
      messageId: messageId as string,
      replyTo: replyTo as string,
    });
    if (this.#running === null && !this.#stopping)
      this.#running = this.#loop().finally(() => {
        this.#running = null;
      });
  }

  /** Forgets the deliveries of a channel that closed: the broker redelivers them. */
  forget(channel: Channel): void {
    this.#pending = this.#pending.filter((delivery) => delivery.channel !== channel);
  }

  /** Finishes the batch in flight, then returns the deliveries not started to the queue. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#retry.abort();
    this.#ctx.writes.wake(); // a loop waiting for a write slot looks again, and ends
    await this.#running;
    for (const delivery of this.#pending)
      if (this.#ctx.isOpen(delivery.channel)) delivery.channel.nack(delivery.message, false, true);
    this.#pending = [];
  }

  async #loop(): Promise<void> {
    while (this.#pending.length > 0 && !this.#stopping) {
      // While every write slot is busy, deliveries keep gathering here: a busy storage gets fewer, larger
      // writes (fewer commits), and an idle one still gets each delivery at once.
      if (!(await this.#ctx.writes.acquire(1, () => this.#stopping))) return;
      if (this.#pending.length === 0) {
        this.#ctx.writes.release(1); // its channel closed meanwhile (forget)
        continue;
      }
      let items = (this.#pending[0] as Delivery).items.length;
      let count = 1;
      while (count < this.#pending.length) {
        const next = (this.#pending[count] as Delivery).items.length;
        if (items + next > this.#ctx.maxItemsPerWrite) break;
        items += next;
        count++;
      }
      const batch = this.#pending.splice(0, count);
      await this.#process(batch, items);
    }
  }

  async #process(batch: Delivery[], items: number): Promise<void> {
    const started = performance.now();
    let failure: unknown;
    try {
      if (!(await this.#write(batch.flatMap((delivery) => delivery.items))))
        failure = new Error("storage write resolved false");
    } catch (error) {
      failure = error;
    } finally {
      this.#ctx.writes.release(1); // the slot #loop took: replies, acks and a retry's backoff hold none
    }
    const live = batch.filter((delivery) => this.#ctx.isOpen(delivery.channel));
    if (failure === undefined) {
      this.#backoff.reset();
      const replies = new Map<string, Delivery[]>();
      for (const delivery of live) {
        const key = `${delivery.replyTo}\u0000${delivery.callId}`;
        replies.set(key, [...(replies.get(key) ?? []), delivery]);
      }
      for (const group of replies.values()) {
        const { channel, replyTo, callId } = group[0] as Delivery;
        channel.sendToQueue(
          replyTo,
          encodeReply(
            true,
            group.map((d) => d.messageId),
          ),
          {
            correlationId: callId,
            contentType: "application/json",
            persistent: false,
          },
        );
      }
      for (const delivery of live) delivery.channel.ack(delivery.message);
      this.#ctx.emit("batch", {
        queue: this.#queue,
        messages: batch.length,
        items,
        durationMs: performance.now() - started,
      });
      return;
    }
    const attempt = this.#backoff.attempt + 1;
    this.#ctx.logger.warn(
      { queue: this.#queue, attempt, err: failure },
      "storage write failed; requeueing the batch",
    );
    this.#ctx.emit("storage-error", { queue: this.#queue, error: failure, attempt });
    await sleep(this.#backoff.next(), { signal: this.#retry.signal }).catch(() => {});
    for (const delivery of batch)
      if (this.#ctx.isOpen(delivery.channel)) delivery.channel.nack(delivery.message, false, true);
  }

  #write(items: Item[]): Promise<boolean> {
    const { storage } = this.#ctx;
    switch (this.#spec.method) {
      case "content_add":
        return storage.contentAdd(resolveDates(items as Array<[Sha1, Timestamp]>));
      case "directory_add":
        return storage.directoryAdd(resolveDirectory(items as Parameters<typeof resolveDirectory>[0]));
      case "revision_add":
        return storage.revisionAdd(resolveRevision(items as Parameters<typeof resolveRevision>[0]));
      case "origin_add": {
        const urls = new Map<Sha1, string>();
        for (const [id, url] of items as Array<[Sha1, string]>) if (!urls.has(id)) urls.set(id, url);
        return storage.originAdd(urls);
      }
      case "location_add": {
        const paths = new Map<string, Path>();
        for (const [path] of items as Array<[Path]>) paths.set(bytesKey(path), path);
        return storage.locationAdd(paths.values());
      }
      case "relation_add":
        return storage.relationAdd(
          this.#spec.relation as RelationType,
          resolveRelation(items as Array<[Sha1, Sha1, Path | null]>),
        );
    }
  }
}
