import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { fileURLToPath } from "node:url";
import { waitFor } from "@x/test-support/wait-for";
import { describe, expect, it, onTestFinished } from "vitest";
import { leaseClaim, PollingErmrestCatalog, type Row } from "../src/index.js";
import { closedPort, startTestFake } from "./helpers.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const leaseMs = 1_500;

/** Starts the child agent; resolves with it and the ids it holds once it says so. */
async function startChild(server: string) {
  const child = spawn(
    process.execPath,
    ["--conditions=@x/source", "--import", "tsx", "test/lease-agent-child.ts"],
    {
      cwd: packageDir,
      env: { ...process.env, SERVER: server, LEASE_MS: String(leaseMs) },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  onTestFinished(() => void child.kill("SIGKILL"));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("exit", (_code, signal) => resolve(signal)),
  );
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const line = await waitFor(() => /^holding (.+)$/m.exec(stdout)?.[1], 30_000, "the child holding claims");
  return { child, exited, held: line.split(",").map(Number) };
}

describe("leases", () => {
  it("rows held by an agent killed with SIGKILL mid-job are completed by the others after the lease", async () => {
    const fake = await startTestFake({
      "S:Job": {
        key: ["id"],
        columns: ["state", "owner", "lease_until"],
        types: { id: "int4", lease_until: "timestamptz" },
        rows: Array.from({ length: 12 }, (_, i) => ({ id: i + 1, state: "queued" })),
      },
    });
    const { child, exited, held } = await startChild(fake.server);
    expect(held).toHaveLength(5);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const leases = new Map(fake.rows("S:Job").map((row) => [row.id, Date.parse(row.lease_until as string)]));

    const controller = new AbortController();
    setMaxListeners(20, controller.signal);
    const reclaims = new Map<unknown, number>();
    const amqpServer = `127.0.0.1:${await closedPort()}`;
    const polls = ["a", "b", "c"].map((owner) => {
      const catalog = new PollingErmrestCatalog({
        scheme: "http",
        server: fake.server,
        catalogId: 1,
        amqpServer,
      });
      const lease = leaseClaim({ table: "S:Job", owner, leaseMs });
      let idleEtag: string | null = null;
      const claim = async (path: string, etag: string | null) =>
        catalog.stateChangeOnce(path, lease.updatePath, lease.transform, etag, { spread: true });
      const lookForWork = async () => {
        const ready = await claim(lease.queryPath, idleEtag);
        idleEtag = ready.idleEtag;
        let batch: Array<[Row, Row]> = ready.batch;
        if (batch.length === 0) batch = (await claim(lease.expiredPath, null)).batch;
        for (const [job] of batch) {
          if (job.owner === "child") reclaims.set(job.id, Date.now());
          await catalog.put("/attributegroup/S:Job/RID,mine:=owner;state", {
            json: [{ RID: job.RID, mine: owner, state: "complete" }],
          });
        }
        return batch.length > 0;
      };
      return catalog.blockingPoll(lookForWork, { pollingMs: 300, signal: controller.signal });
    });
    onTestFinished(async () => {
      controller.abort();
      await Promise.all(polls);
    });
    await waitFor(
      () => fake.rows("S:Job").every((row) => row.state === "complete"),
      30_000,
      "every row complete",
    );
    controller.abort();
    await Promise.all(polls);
    const rows = fake.rows("S:Job");
    for (const id of held) {
      const row = rows.find((r) => r.id === id);
      expect(row?.owner).not.toBe("child");
      expect(reclaims.get(id)).toBeGreaterThanOrEqual(leases.get(id) as number);
    }
    expect([...reclaims.keys()].sort()).toEqual([...held].sort());
  }, 60_000);
});
