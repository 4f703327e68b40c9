// The README's quick start, run as written (its imports pointed at this checkout) in a child process: it must
// finish against the fake ERMrest without declaring anything on the RabbitMQ of this machine, which it never
// names.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AMQP_URL, requireService } from "@x/test-support/services";
import { testTempDir } from "@x/test-support/temp-dir";
import { beforeAll, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const broker = new URL(AMQP_URL);
const management = `http://${broker.hostname}:15672/api`;
const auth = {
  authorization: `Basic ${Buffer.from(`${decodeURIComponent(broker.username)}:${decodeURIComponent(broker.password)}`).toString("base64")}`,
};

/** The first TypeScript block of the README's Usage section, importing this checkout's sources. */
function quickStart(): string {
  const readme = readFileSync(join(packageDir, "README.md"), "utf8");
  const usage = readme.slice(readme.indexOf("## Usage"));
  const code = /```ts\n([\s\S]*?)```/.exec(usage)?.[1];
  if (code === undefined) throw new Error("no ts block under ## Usage in README.md");
  return code
    .replace('"@x/polling-catalog/testing"', JSON.stringify(join(packageDir, "src/testing/index.ts")))
    .replace('"@x/polling-catalog"', JSON.stringify(join(packageDir, "src/index.ts")));
}

async function api(path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${management}${path}`, { ...init, headers: auth });
}

async function exchangeNames(): Promise<string[]> {
  const response = await api("/exchanges/%2F?columns=name");
  expect(response.status).toBe(200);
  return ((await response.json()) as Array<{ name: string }>).map((exchange) => exchange.name).sort();
}

beforeAll(() => requireService("RabbitMQ", AMQP_URL));

it("the README's quick start runs against the fake and declares nothing on the local RabbitMQ", async () => {
  // An ermrest_changes left unused by an earlier run (as this quick start used to leave it) is removed first,
  // so that the run below could not hide behind it.
  const bindings = await api("/exchanges/%2F/ermrest_changes/bindings/source");
  if (bindings.status === 200 && ((await bindings.json()) as unknown[]).length === 0)
    await api("/exchanges/%2F/ermrest_changes", { method: "DELETE" });
  const before = await exchangeNames();
  expect(before).not.toContain("ermrest_changes");

  const file = join(testTempDir("quick-start-"), "quick-start.mts");
  writeFileSync(file, quickStart());
  const child = spawn(process.execPath, ["--conditions=@x/source", "--import", "tsx", file], {
    cwd: packageDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect(code, output).toBe(0);
  expect(output).toContain("1 complete: job 1 done");
  expect(output).toContain("3 complete: job 3 done");

  expect(await exchangeNames()).toEqual(before);
}, 60_000);
