import type { ChildProcess, StdioOptions } from "node:child_process";

const { spawn } = process.getBuiltinModule("node:child_process");
const { closeSync, constants: fsConstants, existsSync, openSync } = process.getBuiltinModule("node:fs");
const { constants } = process.getBuiltinModule("node:os");

/**
 * The launcher: Perl, which can do what `spawn()` cannot between a fork and an exec. It takes `<status fd>
 * <signals to ignore, comma-separated> <1: a process group of its own, else 0> <program> <args…>`, moves the
 * status descriptor above 2 (Perl makes those close-on-exec), sets the dispositions, leaves for a group of its
 * own in the same session (`setpgid(0, 0)`) when asked, and execs the program through `PATH` (`execvp`). If
 * the exec fails, it writes errno on the status descriptor; a status pipe that closes empty means the program
 * runs. The pid stays the same throughout, so it names the command (and its group) from the spawn on.
 */
const program = `my ($f, $i, $g) = splice @ARGV, 0, 3;
open(my $s, ">&$f") or exit 126; open(my $t, ">&=$f"); close $t;
setpgrp(0, 0) if $g; $SIG{$_} = "IGNORE" for split /,/, $i;
exec {$ARGV[0]} @ARGV; print $s $! + 0; exit 127`;

/** Where the launcher's interpreter lives; without it a command runs without what only it can give. */
const perl = "/usr/bin/perl";
let available: boolean | undefined;

/** Whether the launcher can run here (Perl is installed; not on Windows). Checked once. */
export function launcherAvailable(): boolean {
  available ??= process.platform !== "win32" && existsSync(perl);
  return available;
}

/**
 * Whether this process has a controlling terminal (`/dev/tty` opens). Without one, a process group of its own
 * in our session and one in a new session behave alike for the command (no terminal to read or to stop it),
 * and a new session needs no launcher.
 */
export function hasControllingTerminal(): boolean {
  try {
    closeSync(openSync("/dev/tty", fsConstants.O_RDONLY | fsConstants.O_NOCTTY));
    return true;
  } catch {
    return false;
  }
}

/** What the launcher does before it execs the command. */
export interface LaunchOptions {
  /** Leave for a process group of its own, in the caller's session. */
  ownGroup: boolean;
  /** Signals the command starts with ignored (`SIG_IGN`, which an exec keeps). */
  ignored: readonly NodeJS.Signals[];
  stdio: StdioOptions;
  env: NodeJS.ProcessEnv;
  cwd: string | undefined;
}

/** A command started through the launcher, and how to learn whether its exec worked. */
export interface Launched {
  child: ChildProcess;
  /** Resolves once the command runs (`undefined`) or its exec failed (the error, as `spawn()` would give it). */
  started: Promise<NodeJS.ErrnoException | undefined>;
}

/**
 * Starts `command args…` through the launcher (see {@link launcherAvailable}). The child's pid is the command's.
 */
export function launch(command: string, args: readonly string[], options: LaunchOptions): Launched {
  const base: unknown[] =
    typeof options.stdio === "string" ? Array(3).fill(options.stdio) : [...options.stdio];
  while (base.length < 3) base.push("inherit");
  const statusFd = base.length;
  const names = options.ignored.map((signal) => signal.slice(3)).join(",");
  const child = spawn(
    perl,
    ["-e", program, String(statusFd), names, options.ownGroup ? "1" : "0", command, ...args],
    {
      stdio: [...base, "pipe"] as StdioOptions,
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    },
  );
  const started = new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    child.once("error", (error) => resolve(error));
    const status = child.stdio[statusFd] as NodeJS.ReadableStream | null;
    if (!status) return;
    let text = "";
    status.on("data", (chunk) => (text += String(chunk)));
    status.on("error", () => {});
    status.on("end", () => resolve(text === "" ? undefined : execError(command, args, Number(text))));
  });
  return { child, started };
}

/** The error `spawn()` gives for a failed exec, from its errno. */
function execError(command: string, args: readonly string[], errno: number): NodeJS.ErrnoException {
  const code = Object.entries(constants.errno).find(([, value]) => value === errno)?.[0] ?? `errno ${errno}`;
  const error: NodeJS.ErrnoException = new Error(`spawn ${command} ${code}`);
  return Object.assign(error, {
    errno: -errno,
    code,
    syscall: `spawn ${command}`,
    path: command,
    spawnargs: [...args],
  });
}
