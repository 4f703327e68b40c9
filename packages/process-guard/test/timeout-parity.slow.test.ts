// x-guard beside GNU timeout: each case runs the same shell line twice, once with `$T` the real `timeout`
// (/usr/bin/timeout, GNU coreutils) and once the built x-guard bin (dist/cli.cjs: its first lines are for
// /bin/sh, which the ignored-signal cases need; run `pnpm build` first), and compares exit status, stdout,
// stderr (with timeout's name read as x-guard's) and the time taken (within 50 ms plus x-guard's start-up).
// Cases that need `unshare` or a terminal (`script` from util-linux) are skipped, with a notice, without them.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupAfterTest, packageDir } from "./helpers.js";

const gnu = "/usr/bin/timeout";
const bin = join(packageDir, "dist/cli.cjs");
const isGnu = spawnSync(gnu, ["--version"], { encoding: "utf8" }).stdout?.includes("GNU coreutils") ?? false;
const ready = isGnu && existsSync(bin);
if (!ready) console.warn(`timeout parity skipped: needs GNU ${gnu} and a built ${bin} (pnpm build)`);
const canUnshare = ready && spawnSync("unshare", ["--pid", "--fork", "--map-root-user", "true"]).status === 0;
if (ready && !canUnshare) console.warn("timeout parity: the PID namespace cases are skipped (no unshare)");
const hasScript = ready && spawnSync("script", ["-qec", "true", "/dev/null"]).status === 0;
if (ready && !hasScript) console.warn("timeout parity: the terminal cases are skipped (no script(1))");

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

let dir: string;
/** x-guard's own start-up (`x-guard 10 true`, the median of five), allowed on top of the 50 ms. */
let startupMs = 0;

/** Runs `line` under bash with `$T` set to `tool`, in a fresh directory, in the C locale. */
async function runLine(tool: string, line: string, input?: string): Promise<Outcome> {
  const cwd = await mkdtemp(join(dir, "case-"));
  const started = performance.now();
  const bash = spawn("bash", ["-c", line], {
    cwd,
    env: { ...process.env, LC_ALL: "C", T: tool },
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    detached: true,
  });
  cleanupAfterTest(bash);
  if (input !== undefined) bash.stdin!.end(input);
  let stdout = "";
  let stderr = "";
  bash.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  bash.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const status = await new Promise<number | null>((resolve) => bash.once("close", resolve));
  return { status, stdout, stderr, ms: performance.now() - started };
}

/** timeout's words as x-guard says them: its name (GNU's messages start with the path it was run as). */
const asXGuard = (text: string) =>
  text
    .replaceAll(bin, "x-guard")
    .replaceAll(gnu, "x-guard")
    .replace(/\btimeout\b/g, "x-guard");

/**
 * Runs `line` with both tools (one after the other, so that neither slows the other) and compares. A pair whose
 * times differ by more than the allowance is run again, up to twice, with x-guard's start-up measured again (a
 * busy machine), and the last pair's times count.
 */
async function compare(line: string, options: { input?: string; timing?: boolean } = {}) {
  let expected = await runLine(gnu, line, options.input);
  let actual = await runLine(bin, line, options.input);
  let allowance = 50 + startupMs;
  for (
    let again = 0;
    again < 2 && (options.timing ?? true) && Math.abs(actual.ms - expected.ms) >= allowance;
    again++
  ) {
    allowance = 50 + Math.max(startupMs, measureStartup()); // the machine may be busier now
    expected = await runLine(gnu, line, options.input);
    actual = await runLine(bin, line, options.input);
  }
  expect({ status: actual.status, stdout: asXGuard(actual.stdout), stderr: asXGuard(actual.stderr) }).toEqual(
    {
      status: expected.status,
      stdout: asXGuard(expected.stdout),
      stderr: asXGuard(expected.stderr),
    },
  );
  if (options.timing ?? true) {
    expect(
      Math.abs(actual.ms - expected.ms),
      `${line}: ${actual.ms} ms against ${expected.ms} ms`,
    ).toBeLessThan(allowance);
  }
  return { expected, actual };
}

/** How long `x-guard 10 true` takes now, in ms. */
function measureStartup(): number {
  const started = performance.now();
  execFileSync(bin, ["10", "true"]);
  return performance.now() - started;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "x-guard-parity-"));
  if (!ready) return;
  startupMs = Array.from({ length: 5 }, measureStartup).sort((a, b) => a - b)[2]!;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(canUnshare)("timeout parity: a PID namespace without its own /proc", () => {
  it("fires the limit on time and kills the whole group, whatever /proc shows", async () => {
    const line = `unshare --pid --fork --map-root-user "$T" .3 sh -c '(sleep 1; touch survived) & sleep 3'
      status=$?; sleep 1.2; ls; exit $status`;
    const { actual } = await compare(line); // on time: 0.3 s, not 3 s
    expect(actual.status).toBe(124);
    expect(actual.stdout).toBe(""); // the background job died with the group
  });

  it("refuses a memory limit it could not measure, at once, with 125", async () => {
    const result = await runLine(bin, `unshare --pid --fork --map-root-user "$T" --max-memory 1G 10 sleep 5`);
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/^x-guard: the memory limit cannot measure the command: \/proc shows/);
    expect(result.ms).toBeLessThan(2_000);
  });
});

describe.runIf(ready)("timeout parity: ignored signals are inherited", () => {
  it("passes on the SIGPIPE its caller ignored: the command reports the broken pipe", async () => {
    await compare(`(trap '' PIPE && "$T" 10 yes | :; echo "status \${PIPESTATUS[0]}")`, { timing: false });
    await compare(`(trap '' PIPE INT QUIT HUP && "$T" 10 grep SigIgn /proc/self/status)`);
    await compare(`"$T" 10 grep SigIgn /proc/self/status`);
  });
});

describe.runIf(hasScript)("timeout parity: the terminal", () => {
  it("lets the command open the terminal: it stays in its caller's session", async () => {
    const result = await compare(
      `script -qec '"$T" 2 sh -c "echo hi > /dev/tty"; echo "status $?"' /dev/null`,
    );
    expect(result.actual.stdout).toBe("hi\r\nstatus 0\r\n");
  });

  it("stops a command that reads the terminal (a background group), and the limit ends it: 124", async () => {
    // a line is typed at once: a command allowed to read the terminal would print it and exit 0
    const line = `printf 'typed\\n' | script -qec '"$T" 0.5 head -n 1; echo "status $?"' /dev/null`;
    const { actual } = await compare(line);
    expect(actual.stdout).toBe("typed\r\nstatus 124\r\n"); // the terminal's echo, then the status
  });

  it("--foreground: the command may read the terminal; at the limit only it is signalled", async () => {
    await compare(
      `printf 'typed\\n' | script -qec '"$T" --foreground 2 head -n 1; echo "status $?"' /dev/null`,
      {
        timing: false,
      },
    );
    const { actual } = await compare(
      `"$T" --foreground 0.3 sh -c '(sleep 0.6; echo survived) & sleep 3'; echo "status $?"; sleep 0.6`,
    );
    expect(actual.stdout).toBe("status 124\nsurvived\n");
  });
});

describe.runIf(ready)("timeout parity: durations", () => {
  it.each([
    ["1e-1", "sleep 1"],
    ["1e2", "true"],
    ["2.34e+5d", "true"],
    ["1e-10000", "true"],
    ["inf", "true"],
    ["infinity", "true"],
    ["30d", "true"],
    ["4294967295", "true"],
    ["0x1p-3", "sleep 1"],
    ["1e", "true"],
    ["nan", "true"],
    ["-1", "true"],
  ])("reads %s as timeout(1) does", async (duration, command) => {
    await compare(`"$T" ${duration} ${command}`);
  });
});

describe.runIf(ready)("timeout parity: signals", () => {
  it.each(["0", "EXIT", "RTMIN", "RTMIN+1", "SIGRTMAX", "34", "64", "137", "65", "FOO", "sigint"])(
    "-s %s",
    async (signal) => {
      await compare(`"$T" -v -s ${signal} 0.1 sleep 0.4`);
    },
  );
});

describe.runIf(ready)("timeout parity: output errors", () => {
  it("says 'write error' and exits 125 when its output is full", async () => {
    await compare(`"$T" --help > /dev/full`);
    await compare(`"$T" --version > /dev/full`);
  });
});

describe.runIf(ready)("timeout parity: the command line", () => {
  it.each([
    "--preserve 0.1 sleep 1",
    "--pres 0.1 sleep 1",
    "--sig=INT 0.1 sleep 1",
    "--kill=1 0.1 sleep 1",
    "-v -k 0.2 -s 0 0.1 sleep 1",
    "--foo 1 true",
    "-x 1 true",
    "--sig",
    "-s",
    "--foreground=1 1 true",
    "",
    "1",
    "-- 1 true",
    "1 no-such-command-x",
    "1 /",
  ])("%s", async (args) => {
    await compare(`"$T" ${args}`);
  });
});

describe.runIf(ready)("timeout parity: SIGALRM", () => {
  it("takes a SIGALRM as the time limit, reached now: the signal, then 124", async () => {
    const line = `"$T" -v 10 sh -c 'touch started; exec sleep 5' & guard=$!
      until [ -e started ]; do sleep 0.02; done; kill -ALRM $guard; wait $guard; echo "status $?"`;
    const { actual } = await compare(line);
    expect(actual.stdout).toBe("status 124\n");
  });
});

describe.runIf(ready)("timeout parity: quiet unless --verbose", () => {
  it.each([
    "0.2 sleep 1",
    "-k 0.1 -s 0 0.1 sleep 1",
    "--verbose 0.2 sleep 1",
    "-v -s INT -k 0.1 0.1 sleep 1",
  ])("%s", async (args) => {
    await compare(`"$T" ${args}`);
  });
});
