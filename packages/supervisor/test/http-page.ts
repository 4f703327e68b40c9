import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordingLogger } from "@x/test-support/recording-logger";
import { onTestFinished } from "vitest";
import { type Supervisor, startSupervisor } from "../src/index.js";
import type { DaemonPaths } from "./harness.js";

/** Starts a daemon on `p` with its HTTP listener on a free loopback port; closed when the test finishes. */
export async function startWithHttp(
  p: DaemonPaths,
  http: { refreshMs?: number; pageSize?: number } = {},
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

/** One sample of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)/;

/**
 * A strict parser of the Prometheus text format (version 0.0.4): `# HELP` and `# TYPE` lines, samples with
 * escaped label values, blank lines. Throws on any other line, a sample before its `# TYPE`, a counter not
 * named `…_total`, or a value that is not a number.
 */
export function parsePrometheusText(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(meta[3]!))
          throw new Error(`bad type: ${line}`);
        if (meta[3] === "counter" && !meta[2]!.endsWith("_total"))
          throw new Error(`counter without _total: ${line}`);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const match = sampleLine.exec(line);
    if (!match) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    const [, name, labelText = "", valueText] = match as unknown as [string, string, string, string];
    const family = name.replace(/_(bucket|sum|count)$/, "");
    if (!types.has(name) && !types.has(family)) throw new Error(`sample before its TYPE: ${line}`);
    const labels: Record<string, string> = {};
    let rest = labelText;
    while (rest !== "") {
      const pair = labelPair.exec(rest);
      if (!pair) throw new Error(`bad labels: ${line}`);
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
      rest = rest.slice(pair[0].length);
    }
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    if (valueText !== "NaN" && Number.isNaN(value)) throw new Error(`bad value: ${line}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The value of the sample `name` with exactly `labels`, or `undefined`. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}) {
  const want = JSON.stringify(Object.entries(labels).sort());
  return samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)
    ?.value;
}

/** Where `promtool` is, or `undefined` (Debian's `prometheus` package installs it). */
export const promtool: string | undefined = (() => {
  const found = spawnSync("sh", ["-c", "command -v promtool"], { encoding: "utf8" });
  return found.status === 0 ? found.stdout.trim() : undefined;
})();

/** Runs `promtool check metrics` on `text`: its exit code and output. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync(promtool!, ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
