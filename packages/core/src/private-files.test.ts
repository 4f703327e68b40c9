import { spawnSync } from "node:child_process";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import {
  otherUnavailableNote,
  otherUser,
  otherUsersDirectory,
  otherUserUnavailable,
} from "@x/test-support/other-user";
import { recordingLogger } from "@x/test-support/recording-logger";
import { testTempDir } from "@x/test-support/temp-dir";
import { describe, expect, it } from "vitest";
import {
  checkPrivateDirectory,
  chooseCacheDirectory,
  createFileExclusive,
  writeFileAtomic,
} from "./private-files.js";

const privateFiles = JSON.stringify(new URL("./private-files.ts", import.meta.url).pathname);
const mode = (path: string) => statSync(path).mode & 0o777;

/** A temporary directory that another user can reach (the default one is `0700`), with a root-only secret in it. */
function sharedTemp() {
  const dir = testTempDir("x-private-files-");
  chmodSync(dir, 0o755);
  const secret = join(dir, "secret");
  writeFileSync(secret, "root only\n", { mode: 0o600 });
  return { dir, secret };
}

describe("writeFileAtomic", () => {
  it("replaces the file with the new content, mode 0600 by default, leaving no temporary file", () => {
    const dir = testTempDir("x-private-files-");
    const target = join(dir, "out.txt");
    writeFileSync(target, "old");
    chmodSync(target, 0o644);
    writeFileAtomic(target, "new");
    expect(readFileSync(target, "utf8")).toBe("new");
    expect(mode(target)).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["out.txt"]);
  });

  it("takes a mode, bytes, or a function that writes to the descriptor", () => {
    const dir = testTempDir("x-private-files-");
    writeFileAtomic(join(dir, "bytes"), Buffer.from([1, 2, 3]), { mode: 0o644, fsync: false });
    expect([...readFileSync(join(dir, "bytes"))]).toEqual([1, 2, 3]);
    expect(mode(join(dir, "bytes"))).toBe(0o644);
    writeFileAtomic(join(dir, "parts"), (fd) => {
      writeSync(fd, "a");
      writeSync(fd, "b");
    });
    expect(readFileSync(join(dir, "parts"), "utf8")).toBe("ab");
  });

  it("replaces a link at the target instead of writing through it", () => {
    const { dir, secret } = sharedTemp();
    const target = join(dir, "page.html");
    symlinkSync(secret, target);
    writeFileAtomic(target, "page");
    expect(readFileSync(secret, "utf8")).toBe("root only\n");
    expect(lstatSync(target).isSymbolicLink()).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("page");
  });

  it("leaves the target as it was and removes its temporary file when writing fails", () => {
    const dir = testTempDir("x-private-files-");
    const target = join(dir, "out.txt");
    writeFileSync(target, "old");
    expect(() =>
      writeFileAtomic(target, () => {
        throw new Error("no content");
      }),
    ).toThrow("no content");
    mkdirSync(join(dir, "a-directory"));
    expect(() => writeFileAtomic(join(dir, "a-directory"), "x")).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readFileSync(target, "utf8")).toBe("old");
    expect(readdirSync(dir).sort()).toEqual(["a-directory", "out.txt"]);
  });

  it("throws what the file system throws for a directory that does not exist", () => {
    const dir = testTempDir("x-private-files-");
    expect(() => writeFileAtomic(join(dir, "missing", "out"), "x")).toThrow(/ENOENT/);
  });
});

describe("createFileExclusive", () => {
  it("creates an empty file with the mode, once; a second call and a planted link change nothing", () => {
    const { dir, secret } = sharedTemp();
    const path = join(dir, "state.db");
    expect(createFileExclusive(path)).toBe(true);
    expect(mode(path)).toBe(0o600);
    expect(statSync(path).size).toBe(0);
    chmodSync(path, 0o640);
    expect(createFileExclusive(path, 0o600)).toBe(false);
    expect(mode(path)).toBe(0o640);

    const link = join(dir, "linked.db");
    symlinkSync(secret, link);
    expect(createFileExclusive(link)).toBe(false);
    expect(readFileSync(secret, "utf8")).toBe("root only\n");
    expect(createFileExclusive(join(dir, "other.db"), 0o644)).toBe(true);
    expect(mode(join(dir, "other.db"))).toBe(0o644 & ~process.umask());
  });

  it("throws what the file system throws otherwise", () => {
    const dir = testTempDir("x-private-files-");
    expect(() => createFileExclusive(join(dir, "missing", "state.db"))).toThrow(/ENOENT/);
  });
});

describe("checkPrivateDirectory", () => {
  it("takes a directory of this user's that nobody else can write, with its parents' links resolved", () => {
    const dir = testTempDir("x-private-files-");
    mkdirSync(join(dir, "real", "cache"), { recursive: true, mode: 0o700 });
    symlinkSync(join(dir, "real"), join(dir, "link"));
    expect(checkPrivateDirectory(join(dir, "real", "cache"))).toEqual({ path: join(dir, "real", "cache") });
    expect(checkPrivateDirectory(join(dir, "link", "cache"))).toEqual({ path: join(dir, "real", "cache") });
  });

  it("refuses a link, a file, a missing directory and one others can write", () => {
    const dir = testTempDir("x-private-files-");
    mkdirSync(join(dir, "open"), { mode: 0o700 });
    chmodSync(join(dir, "open"), 0o777);
    symlinkSync(dir, join(dir, "link"));
    writeFileSync(join(dir, "file"), "");
    expect(checkPrivateDirectory(join(dir, "link")).problem).toBe("is a symbolic link");
    expect(checkPrivateDirectory(join(dir, "file")).problem).toBe("is not a directory");
    expect(checkPrivateDirectory(join(dir, "missing")).problem).toBe("cannot be checked (ENOENT)");
    expect(checkPrivateDirectory(join(dir, "open")).problem).toBe("is writable by others (mode 0777)");
  });

  it("refuses one inside a directory others can write that is not sticky, not one inside /tmp", () => {
    const dir = testTempDir("x-private-files-");
    chmodSync(dir, 0o777);
    mkdirSync(join(dir, "cache"), { mode: 0o700 });
    expect(checkPrivateDirectory(join(dir, "cache")).problem).toBe(
      `is inside ${dir}, writable by others (mode 0777)`,
    );
    chmodSync(dir, 0o1777);
    expect(checkPrivateDirectory(join(dir, "cache")).path).toBe(join(dir, "cache"));
  });

  it.skipIf(otherUserUnavailable !== undefined)(
    `refuses one another user owns, or one inside a directory of theirs${otherUnavailableNote}`,
    () => {
      const { dir } = sharedTemp();
      const theirs = otherUsersDirectory(join(dir, "theirs"), 0o700);
      expect(checkPrivateDirectory(theirs).problem).toBe(
        `is owned by uid ${otherUser.uid}, not ${process.getuid?.()}`,
      );
      const home = otherUsersDirectory(join(dir, "home"));
      mkdirSync(join(home, "cache"), { mode: 0o700 });
      expect(checkPrivateDirectory(join(home, "cache")).problem).toBe(
        `is inside ${home}, owned by uid ${otherUser.uid}`,
      );
    },
  );
});

describe("chooseCacheDirectory", () => {
  it("creates the preferred directory 0700 and uses it", () => {
    const dir = testTempDir("x-private-files-");
    const cache = join(dir, "node-compile-cache");
    expect(chooseCacheDirectory(cache, { env: {} })).toBe(cache);
    expect(mode(cache)).toBe(0o700);
  });

  it.skipIf(otherUserUnavailable !== undefined)(
    `passes over a directory another user made first, for this user's own cache directory, and says why${otherUnavailableNote}`,
    () => {
      const { dir } = sharedTemp();
      const theirs = otherUsersDirectory(join(dir, "node-compile-cache"));
      const { logger, messages } = recordingLogger();
      const xdg = join(dir, "xdg");
      expect(chooseCacheDirectory(theirs, { env: { XDG_CACHE_HOME: xdg }, logger })).toBe(join(xdg, "x"));
      expect(mode(xdg)).toBe(0o700);
      expect(mode(join(xdg, "x"))).toBe(0o700);
      expect(messages("debug")).toEqual([
        `cache directory ${theirs} is owned by uid ${otherUser.uid}, not 0`,
        `using cache directory ${join(xdg, "x")}`,
      ]);
      // without XDG_CACHE_HOME: ~/.cache/x
      const home = join(dir, "home");
      mkdirSync(home, { mode: 0o700 });
      expect(chooseCacheDirectory(theirs, { env: { HOME: home } })).toBe(join(home, ".cache", "x"));
      expect(mode(join(home, ".cache"))).toBe(0o700);
    },
  );

  it("keeps no cache when this user's own directory is not safe either, or there is no home", () => {
    const dir = testTempDir("x-private-files-");
    const xdg = join(dir, "xdg");
    mkdirSync(join(xdg, "x"), { recursive: true });
    chmodSync(join(xdg, "x"), 0o777);
    const { logger, messages } = recordingLogger();
    expect(chooseCacheDirectory(undefined, { env: { XDG_CACHE_HOME: xdg }, logger })).toBeUndefined();
    expect(messages("debug")).toEqual([
      `cache directory ${join(xdg, "x")} is writable by others (mode 0777): keeping no cache`,
    ]);
    expect(chooseCacheDirectory(undefined, { env: {} })).toBeUndefined();
  });
});

describe("enableCompileCacheSafely", () => {
  /** Runs the function in a fresh Node with `env`, and returns what it found. */
  function enableIn(env: NodeJS.ProcessEnv) {
    const script = `import { enableCompileCacheSafely } from ${privateFiles};
      import { getCompileCacheDir } from "node:module";
      const returned = enableCompileCacheSafely() ?? null;
      console.log(JSON.stringify({ returned, node: getCompileCacheDir() ?? null }));`;
    const { NODE_COMPILE_CACHE: _, NODE_DISABLE_COMPILE_CACHE: __, NODE_DEBUG: ___, ...rest } = process.env;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...rest, ...env },
    });
    expect(child.status, child.stderr).toBe(0);
    return {
      ...(JSON.parse(child.stdout) as { returned: string | null; node: string | null }),
      stderr: child.stderr,
    };
  }

  it("keeps Node's compile cache under the temporary directory when that one is safe", () => {
    const dir = testTempDir("x-private-files-");
    const { returned, node } = enableIn({ TMPDIR: dir, HOME: join(dir, "home") });
    expect(node).toMatch(new RegExp(`^${dir}/node-compile-cache/v`));
    expect(returned).toBe(node);
    expect(mode(join(dir, "node-compile-cache"))).toBe(0o700);
  });

  it("is off under NODE_DISABLE_COMPILE_CACHE=1", () => {
    const dir = testTempDir("x-private-files-");
    expect(enableIn({ TMPDIR: dir, NODE_DISABLE_COMPILE_CACHE: "1" })).toMatchObject({
      returned: null,
      node: null,
    });
    expect(readdirSync(dir)).not.toContain("node-compile-cache");
  });

  it.skipIf(otherUserUnavailable !== undefined)(
    `never uses a compile cache directory another user made first, and says so under NODE_DEBUG=x-cache${otherUnavailableNote}`,
    () => {
      const { dir } = sharedTemp();
      const theirs = otherUsersDirectory(join(dir, "node-compile-cache"), 0o777);
      const { returned, node, stderr } = enableIn({
        TMPDIR: dir,
        XDG_CACHE_HOME: join(dir, "xdg"),
        NODE_DEBUG: "x-cache",
      });
      expect(node).toMatch(new RegExp(`^${dir}/xdg/x/v`));
      expect(returned).toBe(node);
      expect(readdirSync(theirs)).toEqual([]);
      expect(stderr).toMatch(/X-CACHE \d+: cache directory .*node-compile-cache is owned by uid 65534/);
    },
  );

  it.skipIf(otherUserUnavailable !== undefined)(
    `takes NODE_COMPILE_CACHE as given to Node, but returns no directory for a cache of its own there if unsafe${otherUnavailableNote}`,
    () => {
      const { dir } = sharedTemp();
      const mine = join(dir, "mine");
      mkdirSync(mine, { mode: 0o700 });
      expect(enableIn({ NODE_COMPILE_CACHE: mine })).toMatchObject({
        returned: expect.stringMatching(`^${mine}/v`),
      });
      const theirs = otherUsersDirectory(join(dir, "theirs"), 0o777);
      const { returned, node } = enableIn({ NODE_COMPILE_CACHE: theirs });
      expect(node).toMatch(new RegExp(`^${theirs}/v`));
      expect(returned).toBeNull();
    },
  );
});
