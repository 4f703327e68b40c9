import { spawnSync } from "node:child_process";

/* The Prometheus text format, read strictly, and promtool's verdict on it, for the daemons' /metrics tests. */

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

/** Runs `promtool check metrics` on `text`: its exit code and output. Throws when promtool is missing. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  if (promtool === undefined)
    throw new Error("promtool is not installed: run pnpm services (Debian's prometheus)");
  const run = spawnSync(promtool, ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
