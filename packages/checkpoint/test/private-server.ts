// Private broker processes for the tests that restart one: own port, own data directory, stopped when the
// test file ends, whatever happens. The shared servers of the machine are never touched.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "@x/test-support/wait-for";

/** A server process that can be restarted on the same port and data directory. */
export interface PrivateServer {
  readonly port: number;
  /** Stops the server gracefully (SIGTERM), waits for its exit, starts it again and waits until it answers. */
  restart(): Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its data directory. Idempotent. */
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1", () => done(true));
  });
}

/**
 * Starts `command args(port, dir)`, with `dir` a fresh data directory, and waits until the port answers.
 *
 * @param name - for messages
 * @param command - the executable, such as `redis-server`
 * @param args - its arguments, given the port and the data directory
 * @param env - more environment variables, given the same (called once, before the first start)
 */
export async function startPrivateServer(
  name: string,
  command: string,
  args: (port: number, dir: string) => string[],
  env?: (port: number, dir: string) => Record<string, string>,
): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "x-checkpoint-server-"));
  const environment = { ...process.env, ...env?.(port, dir) };
  let child: ChildProcess | undefined;
  let output = "";
  const launch = async () => {
    const started = spawn(command, args(port, dir), {
      stdio: ["ignore", "pipe", "pipe"],
      env: environment,
    });
    child = started;
    started.stdout?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    });
    started.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    });
    const exited = once(started, "exit").then(() => {
      throw new Error(`${name} exited at start: ${output}`);
    });
    exited.catch(() => {});
    await Promise.race([waitFor(() => answers(port), 90_000, `${name} on port ${port}`), exited]);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, "exit");
    running.kill("SIGTERM");
    const timer = setTimeout(() => running.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stop();
      await launch();
    },
  };
}
