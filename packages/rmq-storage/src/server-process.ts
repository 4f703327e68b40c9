import type { Logger } from "@x/core";
import { causeCodes } from "@x/core/internal";
import type { ChildMessage, ChildOptions } from "./process-group.js";
import { RmqStorageServer } from "./server.js";

/* A child process of a server started with `processes > 1`: serves its ranges until told to stop. */

const send = (message: ChildMessage) => {
  if (process.connected) process.send?.(message);
};
const log =
  (level: keyof Logger) =>
  (first: object | string, msg?: string): void =>
    send({
      type: "log",
      level,
      fields: typeof first === "string" ? {} : first,
      msg: typeof first === "string" ? first : (msg ?? ""),
    });
const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };

let server: RmqStorageServer | undefined;
const stop = async () => {
  await server?.stop();
  process.exit(0);
};

process.on("message", async (message: { type: "start"; options: ChildOptions } | { type: "stop" }) => {
  if (message.type === "stop") return stop();
  try {
    server = await RmqStorageServer.start({ ...message.options, logger });
    for (const event of ["batch", "storage-error", "dead-letter", "reconnect"] as const)
      server.on(event, (payload: unknown) => send({ type: "event", event, payload }));
    send({ type: "ready", name: server.connectionNames()[0] as string });
  } catch (error) {
    const code = (error as { code?: string }).code ?? "ERR_X_RMQ_STORAGE_BACKEND";
    send({ type: "failed", code, message: (error as Error).message, causes: [...causeCodes(error)] });
    process.exit(1);
  }
});
process.on("disconnect", stop);
// A terminal's Ctrl-C reaches the whole process group: the parent decides when its children stop.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => {});
