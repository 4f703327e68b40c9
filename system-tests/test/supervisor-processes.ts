import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";

const supervisorDir = fileURLToPath(new URL("../../packages/supervisor/", import.meta.url));
const cli = join(supervisorDir, "src/cli.ts");

/** A running `x-supervisor` process (from the TypeScript sources), with its stderr collected. */
export interface SupervisorCli {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the exit code (or 128+n for a signal) when the process exits. */
  exited: Promise<number>;
}

/**
 * Spawns `x-supervisor <args…>`. When the current test finishes the process gets SIGKILL if still running,
 * and is waited for: called after the test's temporary directory was made, this runs before it is removed.
 */
export function startSupervisorCli(args: string[], env: NodeJS.ProcessEnv = {}): SupervisorCli {
  const child = spawn(process.execPath, ["--conditions=@x/source", "--import", "tsx", cli, ...args], {
    cwd: supervisorDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    err += text;
  });
  const exited = new Promise<number>((resolve) =>
    child.once("close", (code, signal) => resolve(code ?? (signal === "SIGKILL" ? 137 : 128))),
  );
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { child, stderr: () => err, exited };
}

/**
 * A shell script for `x-supervisor worker … -- sh <script>`: each job (`<attr> <seconds>`) appends
 * `start <attr> $WORKER` to `$RECORDS`, sleeps, then appends `end <attr> $WORKER`. Appends of a few bytes with
 * O_APPEND are atomic, so the file holds every worker's records in one order.
 */
export const recordingJob = `printf 'start %s %s\\n' "$1" "$WORKER" >> "$RECORDS"
sleep "$2"
printf 'end %s %s\\n' "$1" "$WORKER" >> "$RECORDS"
`;

/** One line written by {@link recordingJob}. */
export interface JobRecord {
  event: "start" | "end";
  attrPath: string;
  worker: string;
}

/** The records {@link recordingJob} wrote to `file` so far (none before the first). */
export function readJobRecords(file: string): JobRecord[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [event, attrPath, worker] = line.split(" ") as [JobRecord["event"], string, string];
      return { event, attrPath, worker };
    });
}
