import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  localActionProblems,
  missingScripts,
  nodeVersionProblems,
  nodeVersions,
  pnpmScripts,
  type WorkflowFile,
} from "./workflows.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  engines: { node: string };
};

/** The Node.js majors the project supports, each tested in CI. */
const SUPPORTED_MAJORS = [22, 24, 26];

function read(path: string): WorkflowFile {
  return { file: path, doc: parse(readFileSync(join(root, path), "utf8")) };
}

const workflows = readdirSync(join(root, ".github/workflows"))
  .filter((name) => /\.ya?ml$/.test(name))
  .map((name) => read(`.github/workflows/${name}`));
const actionDirs = existsSync(join(root, ".github/actions"))
  ? readdirSync(join(root, ".github/actions"))
  : [];
const actions = actionDirs.map((name) => read(`.github/actions/${name}/action.yml`));
const actionsByPath = new Map(
  actions.map(({ file, doc }) => [`./${file.replace(/\/action\.yml$/, "")}`, doc]),
);

/** A GitHub Actions expression, `${{ <body> }}`. */
const expression = (body: string) => `\${{ ${body} }}`;

/** A workflow made in memory: one job whose steps run these commands. */
function workflowRunning(...runs: string[]): WorkflowFile {
  return { file: "memory.yml", doc: { jobs: { test: { steps: runs.map((run) => ({ run })) } } } };
}

describe("pnpmScripts", () => {
  it("names each script a command line runs, wherever pnpm stands", () => {
    const run = [
      "pnpm install --frozen-lockfile && pnpm build",
      'sudo --preserve-env env "PATH=$PATH" HOME=/root pnpm test:leg full',
      "pnpm run check:docs | tee docs.log; pnpm demo --quick # pnpm commented-out",
      "timeout 60 \\",
      "  pnpm check:startup",
    ].join("\n");
    expect(pnpmScripts(run)).toEqual(["build", "test:leg", "check:docs", "demo", "check:startup"]);
  });

  it("leaves out pnpm's own commands, packages' scripts, expressions and mere mentions of pnpm", () => {
    for (const run of [
      "pnpm install",
      "pnpm exec vitest run --project supervisor",
      "pnpm --filter @x/supervisor bench",
      "pnpm -r build",
      `pnpm ${expression("matrix.script")}`,
      "pnpm",
      "npm install -g pnpm@10",
      "command -v pnpm",
    ])
      expect(pnpmScripts(run), run).toEqual([]);
  });
});

describe("missingScripts", () => {
  it("reports a script package.json lacks, in a run and in an action's input", () => {
    const file = workflowRunning("pnpm install --frozen-lockfile", "pnpm build && pnpm buidl");
    const release: WorkflowFile = {
      file: "release.yml",
      doc: {
        jobs: {
          release: {
            steps: [{ uses: "changesets/action@v1", with: { publish: "pnpm relase", title: "pnpm" } }],
          },
        },
      },
    };
    expect(missingScripts([file, release], { build: "tsdown", release: "changeset publish" })).toEqual([
      "memory.yml: jobs.test.steps[1]: pnpm buidl",
      "release.yml: jobs.release.steps[0]: pnpm relase",
    ]);
  });

  it("finds every script the repository's workflows and actions run in the root package.json", () => {
    expect(workflows.map(({ file }) => file)).toEqual(
      expect.arrayContaining([
        ".github/workflows/ci.yml",
        ".github/workflows/docs.yml",
        ".github/workflows/release.yml",
      ]),
    );
    const all = [...workflows, ...actions];
    // Against no scripts at all, every run is reported: the check reads the real steps.
    expect(missingScripts(all, {}).length).toBeGreaterThan(15);
    expect(missingScripts(all, rootPackage.scripts)).toEqual([]);
  });
});

describe("Node.js versions", () => {
  it("expands a matrix and reports a version outside engines and a supported major left out", () => {
    const file: WorkflowFile = {
      file: "memory.yml",
      doc: {
        jobs: {
          test: {
            strategy: { matrix: { node: [20, 24], include: [{ node: "22.11" }] } },
            steps: [{ uses: "actions/setup-node@v6", with: { "node-version": expression("matrix.node") } }],
          },
          lint: { steps: [{ uses: "actions/setup-node@v6", with: { "node-version": "lts/*" } }] },
        },
      },
    };
    expect(nodeVersions([file]).map(({ version }) => version)).toEqual(["20", "24", "22.11", "lts/*"]);
    expect(nodeVersionProblems(nodeVersions([file]), "^22.12.0 || >=24", [22, 24, 26])).toEqual([
      "memory.yml: jobs.test.steps[0]: Node 20 is outside engines.node ^22.12.0 || >=24",
      "memory.yml: jobs.test.steps[0]: Node 22.11 is outside engines.node ^22.12.0 || >=24",
      "memory.yml: jobs.lint.steps[0]: Node lts/* is outside engines.node ^22.12.0 || >=24",
      "no step installs Node 26",
    ]);
  });

  it("installs only versions engines.node allows, and CI tests every supported major", () => {
    expect(nodeVersionProblems([], rootPackage.engines.node, [])).toEqual([]);
    const majors = SUPPORTED_MAJORS.map((major) => ({ where: "supported", version: String(major) }));
    expect(nodeVersionProblems(majors, rootPackage.engines.node, SUPPORTED_MAJORS)).toEqual([]);

    expect(nodeVersionProblems(nodeVersions(workflows), rootPackage.engines.node, [])).toEqual([]);
    const ci = workflows.filter(({ file }) => file.endsWith("/ci.yml"));
    expect(nodeVersionProblems(nodeVersions(ci), rootPackage.engines.node, SUPPORTED_MAJORS)).toEqual([]);
  });
});

describe("local actions", () => {
  it("reports an input the action lacks and a required input left out", () => {
    const file: WorkflowFile = {
      file: "memory.yml",
      doc: { jobs: { a: { steps: [{ uses: "./.github/actions/setup", with: { "node-versoin": 24 } }] } } },
    };
    const setup = { inputs: { "node-version": { required: true }, services: { default: "false" } } };
    expect(localActionProblems([file], new Map([["./.github/actions/setup", setup]]))).toEqual([
      "memory.yml: jobs.a.steps[0]: ./.github/actions/setup has no input node-versoin",
      "memory.yml: jobs.a.steps[0]: ./.github/actions/setup needs input node-version",
    ]);
  });

  it("gives each of the repository's local actions only the inputs it declares", () => {
    expect(actionsByPath.size).toBeGreaterThan(0);
    expect(localActionProblems([...workflows, ...actions], actionsByPath)).toEqual([]);
  });
});
