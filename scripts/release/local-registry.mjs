// A throwaway npm registry (verdaccio) on 127.0.0.1 with its storage in a temporary directory: @x/*
// packages live only there, everything else is proxied from the registry npm is configured with.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * The environment without the `npm_config_*` variables that `pnpm run` sets for its scripts (npm warns of
 * the ones it does not know), so child commands read the user's own configuration.
 */
export function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)));
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts verdaccio in `dir` and registers a publishing user. Resolves to `{ url, npmrc, stop }`: `npmrc`
 * is a user config file that points npm and pnpm at the registry with the user's token.
 */
export async function startLocalRegistry(dir, verdaccioBin) {
  mkdirSync(dir, { recursive: true });
  const upstream = execFileSync("npm", ["config", "get", "registry"], {
    encoding: "utf8",
    env: cleanEnv(),
  }).trim();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    [
      `storage: ${join(dir, "storage")}`,
      "auth:",
      "  htpasswd:",
      `    file: ${join(dir, "htpasswd")}`,
      "uplinks:",
      "  upstream:",
      `    url: ${upstream}`,
      "    timeout: 60s",
      "packages:",
      "  '@x/*':",
      "    access: $all",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "    proxy: upstream",
      `listen: 127.0.0.1:${port}`,
      "log: { type: stdout, format: pretty, level: error }",
      "",
    ].join("\n"),
  );
  const child = spawn(process.execPath, [verdaccioBin, "--config", config], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const stop = async () => {
    if (exited) return;
    child.kill("SIGTERM");
    for (let i = 0; i < 50 && !exited; i++) await sleep(100);
    if (!exited) child.kill("SIGKILL");
  };
  try {
    await waitForPing(url, () => exited);
    const token = await addUser(url);
    const npmrc = join(dir, "npmrc");
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
    return { url, npmrc, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForPing(url, exited) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited()) throw new Error("verdaccio exited before it answered");
    try {
      if ((await fetch(new URL("-/ping", url))).ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`verdaccio did not answer at ${url} within 60 s`);
    await sleep(200);
  }
}

async function addUser(url) {
  const name = "release-check";
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      name,
      password: `p-${process.pid}-${Date.now()}`,
      email: "release-check@localhost",
    }),
  });
  const body = await response.json();
  if (!response.ok || !body.token) throw new Error(`cannot add a user to verdaccio: ${JSON.stringify(body)}`);
  return body.token;
}
