import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import {
  otherUnavailableNote,
  otherUsersDirectory,
  otherUserUnavailable,
  plantLinkAsOtherUser,
  plantPidLinksAsOtherUser,
} from "@x/test-support/other-user";
import { testTempDir } from "@x/test-support/temp-dir";
import { describe, expect, it } from "vitest";
import { packageDir } from "./helpers.js";

// x-guard keeps Node's compile cache and its own code cache in `node-compile-cache` under the temporary directory,
// a name every user of the machine can take first. These runs give it a temporary directory where another user
// did, and planted links to a root-only file at the names x-guard writes.

const built = join(packageDir, "dist", "cli.cjs");
const bins = [
  {
    name: "the sources' bin",
    args: ["--import", "tsx", "--conditions=@x/source", join(packageDir, "src", "cli.ts")],
  },
  {
    name: "the built bin (dist/cli.cjs)",
    args: [built],
    missing: !existsSync(join(packageDir, "dist", "cli-main.cjs")),
  },
];

/** Every entry under `dir`, with its owner, as `path uid`. */
function entries(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((entry) => `${entry} ${lstatSync(join(dir, entry)).uid}`)
    .sort();
}

/** Runs `x-guard 10 true` with `env` added; expects it to succeed quietly. */
function runGuard(args: readonly string[], env: NodeJS.ProcessEnv): void {
  const { NODE_COMPILE_CACHE: _, NODE_DISABLE_COMPILE_CACHE: __, ...rest } = process.env;
  const child = spawnSync(process.execPath, [...args, "10", "true"], {
    cwd: packageDir,
    encoding: "utf8",
    env: { ...rest, ...env },
  });
  expect(child.stderr).toBe("");
  expect(child.status).toBe(0);
}

/** The name of Node's compile cache directory for this Node and user (`v24.…-x64-<hash>-<uid>`). */
function compileCacheName(dir: string): string {
  const script = `const m = require("node:module"); m.enableCompileCache(${JSON.stringify(dir)}); console.log(m.getCompileCacheDir())`;
  return basename(spawnSync(process.execPath, ["-e", script], { encoding: "utf8" }).stdout.trim());
}

describe.skipIf(otherUserUnavailable !== undefined)(`x-guard's caches${otherUnavailableNote}`, () => {
  it.each(bins)("$name writes nothing in a cache directory another user made first", ({ args, missing }) => {
    if (missing) {
      console.warn(`skipped the built bin: ${built} has no build beside it (run pnpm build)`);
      return;
    }
    const dir = testTempDir("x-guard-cache-");
    chmodSync(dir, 0o755);
    const secret = join(dir, "secret");
    writeFileSync(secret, "root only\n", { mode: 0o600 });

    // the caches' names, as a run in a directory of our own makes them
    const own = join(dir, "own");
    runGuard(args, { TMPDIR: own, XDG_CACHE_HOME: join(dir, "unused") });
    const versionDir = compileCacheName(join(own, "node-compile-cache"));
    const ownEntries = join(own, "node-compile-cache", versionDir);
    const caches = readdirSync(ownEntries).filter((name) => name.endsWith(".v8-code-cache"));

    // another user's directory, with links at those names and at the temporary names of the next pids
    const shared = otherUsersDirectory(join(dir, "shared"), 0o1777);
    const theirs = otherUsersDirectory(join(shared, "node-compile-cache"), 0o777);
    const theirEntries = otherUsersDirectory(join(theirs, versionDir), 0o777);
    for (const name of caches) {
      plantLinkAsOtherUser(secret, join(theirEntries, name));
      plantPidLinksAsOtherUser(secret, join(theirEntries, `${name}.`), ".tmp", 400);
    }
    const planted = entries(theirs);

    const xdg = join(dir, "xdg");
    runGuard(args, { TMPDIR: shared, XDG_CACHE_HOME: xdg });
    runGuard(args, { TMPDIR: shared, XDG_CACHE_HOME: xdg });
    expect(readFileSync(secret, "utf8")).toBe("root only\n");
    expect(statSync(secret).mode & 0o777).toBe(0o600);
    expect(entries(theirs)).toEqual(planted);
    // the caches went to this user's own directory instead
    expect(statSync(join(xdg, "x")).mode & 0o777).toBe(0o700);
    const moved = readdirSync(join(xdg, "x", versionDir));
    for (const name of caches) expect(moved).toContain(name);
  });
});
