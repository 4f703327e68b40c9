import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "@x/test-support/wait-for";
import { onTestFinished } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(root, "packages/rmq-storage/src/cli.ts");

/** An `x-rmq-storage serve` child process (from the sources, through tsx). */
export interface ServeChild {
  readonly child: ChildProcess;
  readonly name: string;
  stderr(): string;
  /** SIGKILL, and wait until it has exited. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), and wait until it has exited; SIGKILL after 30 s. */
  stop(): Promise<void>;
}

/**
 * Starts `x-rmq-storage serve` on quorum queues with `args` added (`--amqp …`, `--ranges …`, `--standby …`) and
 * resolves once it prints its ready line; it is killed when the test finishes. `exec` runs it through a
 * command, e.g. `ip netns exec <name>` (which `exec`s it: the child is still the server).
 */
export async function serve(
  name: string,
  storage: string,
  prefix: string,
  args: string[],
  exec: readonly string[] = [],
): Promise<ServeChild> {
  const [program = process.execPath, ...through] = [...exec, process.execPath];
  const child = spawn(
    program,
    [
      ...through,
      "--import",
      "tsx",
      "--conditions=@x/source",
      cli,
      "serve",
      "--storage",
      storage,
      "--prefix",
      prefix,
      "--queue-type",
      "quorum",
      "--heartbeat",
      "5",
      ...args,
    ],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let [stdout, stderr] = ["", ""];
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const late = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(late);
  };
  onTestFinished(kill);
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`server ${name} exited ${child.exitCode}: ${stderr}`);
      return stdout.split("\n").includes("ready");
    },
    120_000,
    `server ${name} to be ready`,
  );
  return { child, name, stderr: () => stderr, kill, stop };
}

/** The same list, starting at its `first` element (so that processes spread over the nodes). */
export const rotate = <T>(list: readonly T[], first: number): T[] => [
  ...list.slice(first % list.length),
  ...list.slice(0, first % list.length),
];

/** `--amqp` for each URL. */
export const amqpArgs = (urls: readonly string[]): string[] => urls.flatMap((url) => ["--amqp", url]);
