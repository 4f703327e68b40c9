import type { ChannelModel } from "amqplib";

/** How long a close may wait for the broker's answer, in ms. */
const closeTimeoutMs = 2_000;

/**
 * Closes an AMQP connection, ignoring errors, and resolves within 2 s even when the socket died without
 * amqplib noticing yet (its `close()` would then wait for an answer that never comes).
 */
export async function closeConnection(connection: ChannelModel): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    connection.close().catch(() => {}),
    new Promise<void>((resolve) => connection.once("close", () => resolve())),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, closeTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
}
