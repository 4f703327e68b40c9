import { intersects, minVersion, validRange } from "semver";

/* What the GitHub workflows run, read from their parsed YAML, checked against the root package.json. */

/** A parsed workflow (`.github/workflows/*.yml`) or action (`action.yml`), with the file it came from. */
export interface WorkflowFile {
  /** The file's path, for messages. */
  readonly file: string;
  /** Its YAML, parsed. */
  readonly doc: unknown;
}

/** A step of a job or of a composite action, as far as these checks read it. */
interface Step {
  readonly uses?: string;
  readonly run?: string;
  readonly with?: Record<string, unknown>;
}

/** pnpm's own commands: `pnpm <one of these>` names no script of package.json. */
const PNPM_COMMANDS = new Set(
  (
    "add approve-builds audit bin cache config create dedupe deploy dlx doctor env exec fetch i ignored-builds " +
    "import init install install-test it licenses link list ln ls outdated pack patch patch-commit patch-remove " +
    "prune publish rb rebuild remove rm root self-update server setup store un uninstall unlink up update " +
    "upgrade why"
  ).split(" "),
);

/** pnpm options whose value is the next word. */
const OPTIONS_WITH_VALUE = new Set([
  "--filter",
  "-F",
  "--dir",
  "-C",
  "--workspace-concurrency",
  "--reporter",
]);

/** pnpm options after which a script is a workspace package's, not the root's. */
const PACKAGE_OPTIONS = new Set(["--filter", "-F", "--dir", "-C", "-r", "--recursive"]);

/**
 * The root scripts a shell command line runs: the `<name>` of each `pnpm <name>` or `pnpm run <name>`,
 * wherever `pnpm` stands in a simple command (after `sudo … env VAR=…`, `timeout 60`, …). pnpm's own
 * commands (`install`, `exec`, …), scripts of workspace packages (`--filter`, `-r`) and names that are
 * expressions or variables are left out.
 *
 * @param command - shell text, such as a step's `run` (several lines, `&&`, `|`, `;` and comments allowed).
 */
export function pnpmScripts(command: string): string[] {
  const scripts: string[] = [];
  const text = command.replace(/\\\n/g, " ").replace(/(^|\s)#.*$/gm, "$1");
  for (const segment of text.split(/\n|&&|\|\||[;|()`]/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((word) => word.replace(/^["']|["']$/g, ""));
    const at = words.indexOf("pnpm");
    if (at === -1) continue;
    const script = scriptOf(words.slice(at + 1));
    if (script !== undefined) scripts.push(script);
  }
  return scripts;
}

/** The root script that pnpm's arguments run, if they run one. */
function scriptOf(args: string[]): string | undefined {
  let i = 0;
  while (i < args.length && args[i]!.startsWith("-")) {
    const option = args[i]!.split("=")[0]!;
    if (PACKAGE_OPTIONS.has(option)) return undefined;
    i += OPTIONS_WITH_VALUE.has(option) && !args[i]!.includes("=") ? 2 : 1;
  }
  let name = args[i];
  if (name === "run" || name === "run-script") name = args[i + 1];
  if (name === undefined || name === "" || PNPM_COMMANDS.has(name) || /[${]/.test(name)) return undefined;
  return name;
}

/** The steps of every job of a workflow, or of a composite action, each with where it is. */
export function stepsOf(
  entry: WorkflowFile,
): Array<{ where: string; step: Step; job?: Record<string, unknown> }> {
  const doc = (entry.doc ?? {}) as {
    jobs?: Record<string, { steps?: Step[] }>;
    runs?: { steps?: Step[] };
  };
  const found: Array<{ where: string; step: Step; job?: Record<string, unknown> }> = [];
  for (const [name, job] of Object.entries(doc.jobs ?? {}))
    (job.steps ?? []).forEach((step, i) => {
      found.push({ where: `${entry.file}: jobs.${name}.steps[${i}]`, step, job });
    });
  (doc.runs?.steps ?? []).forEach((step, i) => {
    found.push({ where: `${entry.file}: runs.steps[${i}]`, step });
  });
  return found;
}

/**
 * Each `pnpm <script>` of the files' steps (their `run`, and the string inputs of their `with`, such as
 * changesets/action's `publish`) whose script `scripts` lacks, as `<file>: <step>: pnpm <script>`.
 *
 * @param files - parsed workflows and actions.
 * @param scripts - the root package.json's `scripts`.
 */
export function missingScripts(files: readonly WorkflowFile[], scripts: Record<string, string>): string[] {
  const missing: string[] = [];
  for (const file of files)
    for (const { where, step } of stepsOf(file)) {
      const commands = [step.run, ...Object.values(step.with ?? {})].filter((v) => typeof v === "string");
      for (const script of commands.flatMap(pnpmScripts))
        if (!Object.hasOwn(scripts, script)) missing.push(`${where}: pnpm ${script}`);
    }
  return missing;
}

/** A Node.js version a step installs (its `with.node-version`), with where it is. */
export interface NodeVersionUse {
  readonly where: string;
  /** The version as written, or each value of the matrix variable it names. */
  readonly version: string;
}

/**
 * The Node.js versions the files' steps install: each `with.node-version` (of actions/setup-node or an action
 * that passes it on), a `${{ matrix.<key> }}` expanded to every value the job's matrix gives `<key>` (its
 * list and its `include` entries). Another expression is returned as written, so the checks reject it.
 */
export function nodeVersions(files: readonly WorkflowFile[]): NodeVersionUse[] {
  const uses: NodeVersionUse[] = [];
  for (const file of files)
    for (const { where, step, job } of stepsOf(file)) {
      const value = step.with?.["node-version"];
      if (value === undefined) continue;
      const key = /^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$/.exec(String(value))?.[1];
      if (key === undefined || job === undefined) {
        uses.push({ where, version: String(value) });
        continue;
      }
      const matrix = ((job.strategy as { matrix?: Record<string, unknown> } | undefined)?.matrix ?? {}) as {
        include?: Array<Record<string, unknown>>;
      } & Record<string, unknown>;
      const listed = Array.isArray(matrix[key]) ? (matrix[key] as unknown[]) : [];
      const included = (matrix.include ?? []).map((entry) => entry[key]).filter((v) => v !== undefined);
      for (const version of [...listed, ...included]) uses.push({ where, version: String(version) });
    }
  return uses;
}

/**
 * What is wrong with the Node.js versions: a version no release of which satisfies `engines` (or that is
 * no version range at all), and each major of `majors` that no version covers.
 *
 * @param uses - from {@link nodeVersions}.
 * @param engines - the root package.json's `engines.node`, such as `^22.12.0 || >=24`.
 * @param majors - the majors that must each be installed by some step, such as `[22, 24, 26]`.
 */
export function nodeVersionProblems(
  uses: readonly NodeVersionUse[],
  engines: string,
  majors: readonly number[],
): string[] {
  const problems: string[] = [];
  for (const { where, version } of uses)
    if (validRange(version) === null || !intersects(version, engines))
      problems.push(`${where}: Node ${version} is outside engines.node ${engines}`);
  for (const major of majors)
    if (!uses.some(({ version }) => validRange(version) !== null && minVersion(version)?.major === major))
      problems.push(`no step installs Node ${major}`);
  return problems;
}

/**
 * What is wrong with the steps that use a local action (`uses: ./…`): an input the action does not declare,
 * or a required input without a default that the step does not give.
 *
 * @param files - parsed workflows and actions.
 * @param actions - each local action's parsed `action.yml` by the path steps name it with (`./.github/actions/x`).
 */
export function localActionProblems(
  files: readonly WorkflowFile[],
  actions: ReadonlyMap<string, unknown>,
): string[] {
  const problems: string[] = [];
  for (const file of files)
    for (const { where, step } of stepsOf(file)) {
      if (!step.uses?.startsWith("./")) continue;
      const action = actions.get(step.uses.replace(/\/$/, "")) as
        | { inputs?: Record<string, { required?: boolean; default?: unknown }> }
        | undefined;
      if (action === undefined) {
        problems.push(`${where}: no action at ${step.uses}`);
        continue;
      }
      const inputs = action.inputs ?? {};
      const given = Object.keys(step.with ?? {});
      for (const name of given)
        if (!Object.hasOwn(inputs, name)) problems.push(`${where}: ${step.uses} has no input ${name}`);
      for (const [name, input] of Object.entries(inputs))
        if (input.required && input.default === undefined && !given.includes(name))
          problems.push(`${where}: ${step.uses} needs input ${name}`);
    }
  return problems;
}
