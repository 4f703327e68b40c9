import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { startWorker } from "./worker-thread.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory holding `files` (and a package.json making its `.js` files modules); its URL as a caller's. */
function caller(files: Record<string, string>): URL {
  const dir = mkdtempSync(join(tmpdir(), "x-core-worker-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return pathToFileURL(join(dir, "owner.js"));
}

/** A thread that reports which file it is, its `execArgv` and its `workerData`. */
const thread = (file: string, typed = false) => `
  import { parentPort, workerData } from "node:worker_threads";
  const data${typed ? ": { n: number }" : ""} = workerData;
  parentPort.postMessage({ file: ${JSON.stringify(file)}, execArgv: process.execArgv, n: data.n });
`;

/** The worker's first message, or its error. */
function firstMessage(worker: Worker): Promise<unknown> {
  return new Promise((resolve, reject) => {
    worker.once("message", (message) => {
      resolve(message);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

describe("startWorker", () => {
  it("runs the built .js file next to the caller, with no execArgv, and passes the options on", async () => {
    const from = caller({ "echo-thread.js": thread("js"), "echo-thread.ts": thread("ts", true) });
    const worker = startWorker(from, "echo-thread", { workerData: { n: 7 } });
    await expect(firstMessage(worker)).resolves.toEqual({ file: "js", execArgv: [], n: 7 });
  });

  it("runs the .ts source with Node's type stripping when there is no built file", async () => {
    const from = caller({
      "echo-thread.ts": `import { n } from "./value.ts";\n${thread("ts", true).replace("data.n", "n(data)")}`,
      "value.ts": "export const n = (data: { n: number }): number => data.n;",
    });
    const worker = startWorker(from, "echo-thread", { workerData: { n: 8 } });
    await expect(firstMessage(worker)).resolves.toEqual({ file: "ts", execArgv: [], n: 8 });
  });

  it("turns type stripping on for the thread when the process runs without it", () => {
    const from = caller({ "echo-thread.ts": thread("ts", true) });
    const helper = fileURLToPath(new URL("./worker-thread.ts", import.meta.url));
    const program = `import { startWorker } from ${JSON.stringify(helper)};
      const worker = startWorker(${JSON.stringify(from.href)}, "echo-thread", { workerData: { n: 9 } });
      worker.once("message", (message) => { console.log(JSON.stringify(message)); worker.terminate(); });`;
    // tsx loads the helper; the process itself does not strip types
    const child = spawnSync(
      process.execPath,
      ["--no-experimental-strip-types", "--import", "tsx", "--input-type=module", "-e", program],
      { encoding: "utf8", timeout: 20_000 },
    );
    expect(child.stderr).toBe("");
    expect(JSON.parse(child.stdout)).toEqual({ file: "ts", execArgv: ["--experimental-strip-types"], n: 9 });
  });

  it("reports a missing thread module through the worker's 'error' event", async () => {
    const worker = startWorker(caller({}), "missing-thread");
    await expect(firstMessage(worker)).rejects.toThrow(/Cannot find module/);
  });
});
