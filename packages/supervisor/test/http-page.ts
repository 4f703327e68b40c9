import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { onTestFinished } from "vitest";
import { type Supervisor, startSupervisor } from "../src/index.js";
import type { DaemonPaths } from "./harness.js";

/** Starts a daemon on `p` with its HTTP listener on a free loopback port; closed when the test finishes. */
export async function startWithHttp(
  p: DaemonPaths,
  http: { refreshMs?: number; pageSize?: number; allowedHosts?: string[] } = {},
): Promise<{ sup: Supervisor; base: string }> {
  const sup = await startSupervisor({
    db: p.db,
    fetchersDir: p.fetchersDir,
    socket: p.socket,
    http: { port: 0, ...http },
    logger: recordingLogger().logger,
  });
  onTestFinished(() => sup.close());
  const address = sup.httpAddress()!;
  return { sup, base: `http://${address.host}:${address.port}` };
}

/** Writes a complete fetcher file `<fetcher>.<run>.txt` with `lines`. */
export function writeFetcherFile(p: DaemonPaths, fetcher: string, run: number, lines: string[]): void {
  writeFileSync(join(p.fetchersDir, `${fetcher}.${run}.txt`), `${lines.join("\n")}\n`);
}

/** GETs `url`, failing on a status other than 200; the body as text. */
export async function getText(url: string): Promise<string> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return response.text();
}
