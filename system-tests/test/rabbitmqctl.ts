import { execFile, execFileSync } from "node:child_process";

/** Whether `rabbitmqctl` can talk to the local broker (installed, and allowed to). */
export function rabbitmqctlAvailable(): boolean {
  try {
    execFileSync("rabbitmqctl", ["status"], { stdio: "ignore", timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

/** Runs `rabbitmqctl <args…>`; rejects with its output when it fails. */
export function rabbitmqctl(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile("rabbitmqctl", args, { timeout: 120_000 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`rabbitmqctl ${args.join(" ")}: ${stderr || stdout}`, { cause: error }))
        : resolve(),
    ),
  );
}

/**
 * Stops the broker's application and returns a function that starts it again and waits until it serves;
 * calling that function more than once is harmless, so tests call it in `finally` as well.
 */
export async function stopBroker(): Promise<() => Promise<void>> {
  let restored: Promise<void> | undefined;
  await rabbitmqctl("stop_app");
  return () => {
    restored ??= rabbitmqctl("start_app").then(() => rabbitmqctl("await_startup"));
    return restored;
  };
}
