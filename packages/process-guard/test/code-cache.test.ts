import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  otherUnavailableNote,
  otherUsersDirectory,
  otherUserUnavailable,
  plantLinkAsOtherUser,
} from "@x/test-support/other-user";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadWithCodeCache } from "../src/code-cache.js";

const codeCache = new URL("../src/code-cache.ts", import.meta.url).pathname;

interface Exports {
  answer: number;
  where: { filename: string; dirname: string };
  platform: string;
  helper(): string;
  load(): Promise<{ value: string }>;
  work(n: number): number;
}

// A CommonJS file as a command's build is: builtins through `require`, a file beside it, a lazy `import()`,
// and a function large enough for its compiled code to show in the cache's size once it has run.
const worker = Array.from({ length: 60 }, (_, i) => `  total += (n * ${i + 1}) % ${i + 7};`).join("\n");
const program = `"use strict";
const os = require("node:os");
module.exports = {
  answer: 42,
  where: { filename: __filename, dirname: __dirname },
  platform: os.platform(),
  helper: () => require("./helper.cjs").name,
  load: () => import("./lazy.mjs"),
  work(n) {
    let total = 0;
${worker}
    return total;
  },
};
`;

let dir: string;
let file: string;
let cacheDir: string;
const caches = () => readdirSync(cacheDir).filter((name) => name.endsWith(".v8-code-cache"));
const load = (into: string | undefined = cacheDir, path = file) => {
  const script = loadWithCodeCache(path, into);
  return { ...script, exports: script.exports as Exports };
};

/** Loads the file in a child process, saves its cache, and reports what it found. */
function loadInChild(): { cached: boolean; answer: number } {
  const script = `import { loadWithCodeCache } from ${JSON.stringify(codeCache)};
const script = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)});
script.saveCache();
console.log(JSON.stringify({ cached: script.cached, answer: script.exports.answer }));`;
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=@x/source", "--input-type=module", "-e", script],
    {
      encoding: "utf8",
    },
  );
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout);
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "x-code-cache-"));
  cacheDir = join(dir, "cache");
  mkdirSync(cacheDir, { mode: 0o700 });
  file = join(dir, "main.cjs");
  writeFileSync(file, program);
  writeFileSync(join(dir, "helper.cjs"), `module.exports = { name: "helper" };`);
  writeFileSync(join(dir, "lazy.mjs"), `export const value = "lazy";`);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("loadWithCodeCache", () => {
  it("runs a CommonJS file with its require, module, __filename, __dirname and dynamic import()", async () => {
    const { exports, cached } = load();
    expect(cached).toBe(false);
    expect(exports.answer).toBe(42);
    expect(exports.where).toEqual({ filename: file, dirname: dir });
    expect(exports.platform).toBe(process.platform);
    expect(exports.helper()).toBe("helper");
    expect((await exports.load()).value).toBe("lazy");
  });

  it("saves a cache only this user can read, which the next load takes", () => {
    const first = load();
    first.exports.work(3);
    first.saveCache();
    expect(caches()).toHaveLength(1);
    const saved = statSync(join(cacheDir, caches()[0]!));
    expect(saved.mode & 0o777).toBe(0o600);

    const second = load();
    expect(second.cached).toBe(true);
    expect(second.exports.work(3)).toBe(first.exports.work(3));
    second.saveCache(); // a cache that was taken is not written again
    expect(statSync(join(cacheDir, caches()[0]!)).mtimeMs).toBe(saved.mtimeMs);
  });

  it("keeps the functions a run compiled, not only the file's top level", () => {
    const idle = load();
    idle.saveCache();
    const idleSize = statSync(join(cacheDir, caches()[0]!)).size;
    rmSync(join(cacheDir, caches()[0]!));

    const busy = load();
    busy.exports.work(5);
    busy.saveCache();
    expect(statSync(join(cacheDir, caches()[0]!)).size).toBeGreaterThan(idleSize);
  });

  it("never takes the cache of another version of the file, and removes it when saving its own", () => {
    load().saveCache();
    const [old] = caches();
    writeFileSync(file, program.replace("answer: 42", "answer: 43"));
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));

    const changed = load();
    expect(changed.cached).toBe(false);
    expect(changed.exports.answer).toBe(43);
    changed.saveCache();
    expect(caches()).toHaveLength(1);
    expect(caches()[0]).not.toBe(old);
  });

  it("leaves the caches of the same file name at another path alone", () => {
    load().saveCache();
    const otherDir = join(dir, "other");
    mkdirSync(otherDir);
    const otherFile = join(otherDir, "main.cjs");
    writeFileSync(otherFile, program);
    loadWithCodeCache(otherFile, cacheDir).saveCache();
    expect(caches()).toHaveLength(2);
  });

  it("refuses a cache that others can write", () => {
    load().saveCache();
    chmodSync(join(cacheDir, caches()[0]!), 0o666);
    expect(load().cached).toBe(false);
  });

  it("checks the directory unless the caller says it has just checked it", () => {
    chmodSync(cacheDir, 0o707); // writable by others: refused when checked here
    load().saveCache();
    expect(caches()).toHaveLength(0);
    const trusted = () => loadWithCodeCache(file, cacheDir, { checkedDir: true });
    trusted().saveCache();
    expect(caches()).toHaveLength(1);
    expect(trusted().cached).toBe(true);
  });

  it("replaces a cache V8 rejects", () => {
    // in a fresh process each: this one would compile the same source from V8's own in-memory cache
    load().saveCache();
    writeFileSync(join(cacheDir, caches()[0]!), Buffer.alloc(4096, 7), { mode: 0o600 });
    expect(loadInChild()).toEqual({ cached: false, answer: 42 });
    expect(loadInChild()).toEqual({ cached: true, answer: 42 });
  });

  it.skipIf(process.getuid?.() !== 0)("refuses a cache another user owns", () => {
    load().saveCache();
    chownSync(join(cacheDir, caches()[0]!), 4321, 4321);
    expect(load().cached).toBe(false);
  });

  it("without a directory, or with one it cannot write, runs without a cache and saving does nothing", () => {
    const none = loadWithCodeCache(file, undefined);
    expect(none.cached).toBe(false);
    none.saveCache();
    expect(caches()).toHaveLength(0);

    const missing = load(join(dir, "no-such-directory"));
    expect(missing.cached).toBe(false);
    expect(() => missing.saveCache()).not.toThrow();
  });

  it("leaves no temporary file behind when the cache cannot take its place", () => {
    const first = load();
    first.saveCache();
    const [name] = caches();
    rmSync(join(cacheDir, name!));
    mkdirSync(join(cacheDir, name!)); // a directory where the cache goes: the rename fails
    expect(() => load().saveCache()).not.toThrow();
    expect(readdirSync(cacheDir).filter((entry) => entry.endsWith(".tmp"))).toEqual([]);
  });

  it.skipIf(otherUserUnavailable !== undefined)(
    `neither reads nor writes a cache in a directory another user made, nor through the links they planted there${otherUnavailableNote}`,
    () => {
      load().saveCache();
      const [name] = caches();
      chmodSync(dir, 0o755); // the other user reaches their directory inside it
      const secret = join(dir, "secret");
      writeFileSync(secret, "root only\n", { mode: 0o600 });
      const theirs = otherUsersDirectory(join(dir, "theirs"), 0o777);
      // the cache's name, and the temporary names this process would have written it through
      for (const planted of [name!, `${name}.${process.pid}.tmp`, `${name}.tmp`]) {
        plantLinkAsOtherUser(secret, join(theirs, planted));
      }
      const script = load(theirs);
      expect(script.cached).toBe(false);
      script.exports.work(2);
      script.saveCache();
      expect(readFileSync(secret, "utf8")).toBe("root only\n");
      expect(statSync(secret).mode & 0o777).toBe(0o600);
      expect(readdirSync(theirs).every((entry) => lstatSync(join(theirs, entry)).isSymbolicLink())).toBe(
        true,
      );
    },
  );

  it("throws what reading the file throws", () => {
    expect(() => loadWithCodeCache(join(dir, "missing.cjs"), cacheDir)).toThrow(/ENOENT/);
  });
});
