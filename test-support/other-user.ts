import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { testTempDir } from "./temp-dir.js";

/** The unprivileged user that plays "another user of the machine": `nobody`. */
export const otherUser = { uid: 65534, gid: 65534 } as const;

/**
 * Why tests cannot act as {@link otherUser} here (they need root, to hand files to it, and `setpriv`), or
 * `undefined` when they can. A test that needs it skips with this reason in its name, so that the skip shows.
 */
export const otherUserUnavailable: string | undefined = (() => {
  if (process.getuid?.() !== 0) return "needs root, to act as another user";
  const found = spawnSync("setpriv", ["--version"], { stdio: "ignore" });
  return found.status === 0 ? undefined : "needs setpriv (util-linux), to act as another user";
})();

/**
 * Runs `command args` as {@link otherUser} (`setpriv`, no supplementary groups), as that user would type it.
 *
 * @returns its stdout
 * @throws when it exits with a status other than 0
 */
export function runAsOtherUser(command: string, args: readonly string[]): string {
  return execFileSync(
    "setpriv",
    [`--reuid=${otherUser.uid}`, `--regid=${otherUser.gid}`, "--clear-groups", command, ...args],
    { encoding: "utf8" },
  );
}

/** Creates `dir` owned by {@link otherUser} with `mode` (default `0o755`): a directory that user made. */
export function otherUsersDirectory(dir: string, mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  chownSync(dir, otherUser.uid, otherUser.gid);
  chmodSync(dir, mode);
  return dir;
}

/** Makes `link` a symbolic link to `target`, created by {@link otherUser} (who must be able to write its directory). */
export function plantLinkAsOtherUser(target: string, link: string): void {
  runAsOtherUser("ln", ["-s", target, link]);
}

/**
 * Makes, as {@link otherUser}, links to `target` at `<prefix><pid><suffix>` for the next `count` process ids the
 * kernel will hand out: the temporary names a program that puts its pid in them is about to write. One process
 * (perl, as Debian always has it) reads `/proc/sys/kernel/ns_last_pid` and makes every link, so that planting
 * takes none of those ids itself.
 */
export function plantPidLinksAsOtherUser(
  target: string,
  prefix: string,
  suffix: string,
  count: number,
): void {
  const script = `open(my $f, "<", "/proc/sys/kernel/ns_last_pid") or die; my $last = <$f>;
for my $pid ($last + 1 .. $last + ${count}) { symlink($ARGV[0], "$ARGV[1]$pid$ARGV[2]") or die "$!" }`;
  runAsOtherUser("perl", ["-e", script, target, prefix, suffix]);
}

/** `""`, or ` (skipped: <why>)` to end the name of a test that needs {@link otherUser}, so that its skip says why. */
export const otherUnavailableNote =
  otherUserUnavailable === undefined ? "" : ` (skipped: ${otherUserUnavailable})`;

/**
 * A temporary directory to run a command with as its `TMPDIR`, in which {@link otherUser} made
 * `node-compile-cache` first (mode `0777`), as anyone can under `/tmp`. Call it inside a test: it is removed
 * when the test finishes.
 *
 * @returns `env` for the command (`TMPDIR`, and `XDG_CACHE_HOME` at `own`'s parent), `theirs` (the other
 *   user's directory) and `own` (`$XDG_CACHE_HOME/x`, where a command's cache should go instead)
 */
export function tmpWithOtherUsersCompileCache(): { env: NodeJS.ProcessEnv; theirs: string; own: string } {
  const dir = testTempDir("x-other-users-cache-");
  chmodSync(dir, 0o755);
  const theirs = otherUsersDirectory(join(dir, "node-compile-cache"), 0o777);
  return { env: { TMPDIR: dir, XDG_CACHE_HOME: join(dir, "xdg") }, theirs, own: join(dir, "xdg", "x") };
}
