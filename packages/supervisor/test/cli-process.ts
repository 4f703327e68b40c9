import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitFor } from "@x/test-support/wait-for";
import { onTestFinished } from "vitest";
import type { DaemonPaths } from "./harness.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** A running `x-supervisor` process (from the TypeScript sources), with its output collected. */
export interface CliProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or 128+n for a signal) when the process exits. */
  exited: Promise<number>;
}

/**
 * Spawns `x-supervisor <args…>`. With `closed`, that output's pipe is closed at once on this side, as `| head`
 * does once it has read enough: the command's next write to it fails with `EPIPE`. With `wrapper`, the
 * command runs under it (`["timeout", "60"]`), and `child` is the wrapper.
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  closed?: "stdout" | "stderr",
  wrapper: string[] = [],
): CliProcess {
  const command = [process.execPath, "--conditions=@x/source", "--import", "tsx", cli, ...args];
  const [program, ...programArgs] = [...wrapper, ...command] as [string, ...string[]];
  const child = spawn(program, programArgs, {
    cwd: packageDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (closed) child[closed]!.destroy();
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    out += text;
  });
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    err += text;
  });
  const exited = new Promise<number>((resolve) =>
    child.once("close", (code, signal) => resolve(code ?? (signal === "SIGKILL" ? 137 : 128))),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/**
 * Starts `x-supervisor serve` on `p`. When the current test finishes the process gets SIGKILL if still
 * running, and is waited for: registered after `p` was made, this runs before the directory is removed.
 */
export function serve(p: DaemonPaths): CliProcess {
  const proc = runCli(["serve", p.db, p.fetchersDir, p.socket]);
  onTestFinished(async () => {
    if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    await proc.exited;
  });
  return proc;
}

/**
 * Waits for the `listening` line of `x-supervisor serve … --log-json` and returns it, parsed: where the
 * daemon listens (`tls` and `http` with their actual ports).
 */
export async function listeningLine(
  proc: CliProcess,
): Promise<{ socket: string; tls?: { host: string; port: number }; http?: { host: string; port: number } }> {
  const line = await waitFor(
    () =>
      proc
        .stderr()
        .split("\n")
        .find((l) => l.includes('"msg":"listening"')),
    60_000,
    "the listening line",
  );
  return JSON.parse(line);
}
