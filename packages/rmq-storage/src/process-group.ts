import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Logger } from "@x/core";
import { RmqStorageError } from "./errors.js";
import { openStorage } from "./storage-spec.js";

/** A message between a server and its child processes. */
export type ChildMessage =
  | { type: "ready"; name: string }
  /** `causes`: the `code`s down the error's cause chain (see `causeCodes`), which tell its kind of failure. */
  | { type: "failed"; code: string; message: string; causes: string[] }
  | { type: "event"; event: string; payload: unknown }
  | { type: "log"; level: keyof Logger; fields: object; msg: string };

/** A running group of server processes. */
export interface ProcessGroup {
  /** The children's broker connection names, in the order of their ranges. */
  names: string[];
  /** Stops every child gracefully and waits for them to exit. */
  stop(): Promise<void>;
}

/** Options a child receives: the parent's, minus what cannot cross a process boundary. */
export interface ChildOptions {
  url: string | string[];
  storage: string;
  maxItemsPerWrite: number;
  maxConcurrentWrites: number;
  prefetch: number;
  connectTimeoutMs: number;
  heartbeatMs: number;
  prefix: string;
  ranges: string[];
  standbyWaitMs: number;
  queueType: "classic" | "quorum";
  deliveryLimit?: number | undefined;
}

/** Splits `ranges` into `n` contiguous groups of nearly equal size. */
export function contiguousGroups<T>(ranges: readonly T[], n: number): T[][] {
  const groups: T[][] = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const size = Math.floor(ranges.length / n) + (i < ranges.length % n ? 1 : 0);
    groups.push(ranges.slice(start, start + size));
    start += size;
  }
  return groups.filter((group) => group.length > 0);
}

function childEntry(): { path: string; execArgv: string[] } {
  const built = fileURLToPath(new URL("./server-process.js", import.meta.url));
  // node:fs from getBuiltinModule, not an import: its ESM import costs the package import time (#31)
  if (process.getBuiltinModule("node:fs").existsSync(built)) return { path: built, execArgv: [] };
  // Running from the TypeScript sources (tests, benchmarks): load the child through tsx.
  return {
    path: fileURLToPath(new URL("./server-process.ts", import.meta.url)),
    execArgv: ["--import", import.meta.resolve("tsx"), "--conditions=@x/source"],
  };
}

/**
 * Runs one server per contiguous group of ranges in child processes; resolves once every child serves.
 * Child events and logs are forwarded to the parent.
 */
export async function startProcessGroup(
  options: ChildOptions & { processes: number; logger: Logger },
  emit: (event: string, payload: unknown) => void,
): Promise<ProcessGroup> {
  const { processes, logger, ...rest } = options;
  // Create the tables (and, for SQLite, switch the file to WAL) once, here: N children doing it at the
  // same moment made SQLite answer "database is locked" to some of them.
  await (await openStorage(rest.storage, logger)).close();
  const entry = childEntry();
  const children: ChildProcess[] = [];
  const exited = new Map<ChildProcess, Promise<void>>();
  const stop = async () => {
    for (const child of children) if (child.connected) child.send({ type: "stop" });
    await Promise.all(exited.values());
  };
  let names: string[];
  try {
    names = await Promise.all(
      contiguousGroups(rest.ranges, processes).map(
        (ranges) =>
          new Promise<string>((resolve, reject) => {
            // node:child_process when forking, not at import: it costs the package import time (#31)
            const child = process.getBuiltinModule("node:child_process").fork(entry.path, [], {
              execArgv: entry.execArgv,
              serialization: "advanced",
              stdio: "inherit",
            });
            children.push(child);
            exited.set(child, new Promise((done) => child.once("exit", () => done())));
            child.on("message", (message: ChildMessage) => {
              if (message.type === "ready") resolve(message.name);
              else if (message.type === "failed") reject(childFailure(message));
              else if (message.type === "event") emit(message.event, message.payload);
              else logger[message.level](message.fields, message.msg);
            });
            child.once("exit", (code, signal) => {
              reject(
                new RmqStorageError("ERR_X_RMQ_STORAGE_BACKEND", `server process exited (${signal ?? code})`),
              );
              if (code !== 0) logger.error({ pid: child.pid, code, signal }, "server process exited");
            });
            child.send({ type: "start", options: { ...rest, ranges } satisfies ChildOptions });
          }),
      ),
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { names, stop };
}

/** A child's start failure as an error of this process, its cause chain's codes kept (a refusal stays one). */
function childFailure({ code, message, causes }: { code: string; message: string; causes: string[] }): Error {
  const cause = causes
    .slice(1)
    .reduceRight<Error | undefined>(
      (inner, c) => Object.assign(new Error(c, { cause: inner }), { code: c }),
      undefined,
    );
  return new RmqStorageError(code, message, cause === undefined ? {} : { cause });
}
