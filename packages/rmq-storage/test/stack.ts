import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AMQP_URL } from "@x/test-support/services";
import { uniqueName } from "@x/test-support/unique-name";
import { waitFor } from "@x/test-support/wait-for";
import { openSqliteStorage, type ProvenanceStorage } from "../src/index.js";
import { deleteTopology } from "./broker.js";
import { apply, type Call, dump } from "./fixture.js";

/** A per-file sandbox: a temp directory for SQLite files and unique topology prefixes, all removed by `cleanup`. */
export function sandbox(tag: string) {
  const dir = mkdtempSync(join(tmpdir(), `rmq-storage-${tag}-`));
  const prefixes: string[] = [];
  let n = 0;
  return {
    file: () => join(dir, `db-${n++}.sqlite`),
    prefix: () => {
      const prefix = `${uniqueName(tag)}.`;
      prefixes.push(prefix);
      return prefix;
    },
    cleanup: async () => {
      for (const prefix of prefixes) await deleteTopology(prefix);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the same calls give when made directly on a fresh in-memory SQLite storage. */
export async function directDump(calls: Call[]): Promise<unknown> {
  const storage = await openSqliteStorage(":memory:");
  for (const call of calls) if (!(await apply(storage, call))) throw new Error("direct write failed");
  const out = await dump(storage);
  await storage.close();
  return out;
}

/** What an SQLite file holds. */
export async function fileDump(file: string): Promise<unknown> {
  const storage = await openSqliteStorage(file);
  const out = await dump(storage);
  await storage.close();
  return out;
}

/** A large contentAdd: `count` random ids with random dates. */
export function bigContentCall(count: number): Call {
  const map = new Map<string, bigint>();
  for (let i = 0; i < count; i++)
    map.set(
      `${i.toString(16).padStart(8, "0")}${Math.random().toString(16).slice(2, 10).padEnd(8, "0")}`
        .padEnd(40, "7")
        .slice(-40),
      BigInt(Math.floor(Math.random() * 1e15)),
    );
  return ["contentAdd", map];
}

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** The arguments of `x-rmq-storage serve` for a storage and a prefix on the test broker. */
export const serveArgs = (storage: string, prefix: string): string[] => [
  "--amqp",
  AMQP_URL,
  "--storage",
  storage,
  "--prefix",
  prefix,
];

/** The command line that runs `x-rmq-storage` from the sources (through tsx). */
export const cliCommand = (...args: string[]): string[] => [
  "--import",
  "tsx",
  "--conditions=@x/source",
  cli,
  ...args,
];

/** A `serve` child: its process, what it printed so far, and a promise of its ready line. */
export interface ServerChild {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once the ready line is printed; rejects if the child exits first. */
  ready: () => Promise<void>;
}

/** `process.env` without `AMQP_URL` and `STORAGE_URL`, which the CLI reads in place of a missing flag. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { AMQP_URL: _amqp, STORAGE_URL: _storage, ...rest } = process.env;
  return { ...rest, ...extra };
}

/** Runs `x-rmq-storage <args…>` (from the sources) to completion; `env` defaults to {@link cliEnv}. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = cliEnv(),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cliCommand(...args), { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `x-rmq-storage serve` in a child process (from the sources, through tsx); resolves once it prints its
 * ready line on stdout, as a user would wait for it (with `waitForReady: false`, at once).
 */
export async function spawnServer(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; waitForReady?: boolean } = {},
): Promise<ServerChild> {
  const child = spawn(process.execPath, cliCommand("serve", ...args), {
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.env ? { env: options.env } : {}),
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ready = async () => {
    await waitFor(
      () => stdout.split("\n").includes("ready") || child.exitCode !== null,
      60_000,
      "the server child's ready line",
    );
    if (child.exitCode !== null) throw new Error(`server child exited ${child.exitCode}: ${stderr}`);
  };
  if (options.waitForReady !== false) await ready();
  return { child, stdout: () => stdout, stderr: () => stderr, ready };
}

/** Opens a read-only view of the storage for a client (the server writes the same file). */
export const reader = (file: string): Promise<ProvenanceStorage> => openSqliteStorage(file);
