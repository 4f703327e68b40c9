/**
 * Three condition-action agents share a "jobs" table on a fake ERMrest: each claims one queued job at a
 * time through the status column, does the work, and marks the job complete. With RabbitMQ reachable they
 * are woken by change notices; otherwise they poll. The program ends by itself once every job is complete
 * (or on Ctrl-C) and prints who did what.
 *
 * Run: pnpm --filter @x/polling-catalog example
 */
import { createConsoleLogger, sleep } from "@x/core";
import { onShutdownSignals } from "@x/core/internal";
import { ErmrestCatalog, PollingErmrestCatalog, type Row } from "@x/polling-catalog";
import { type FakeErmrest, startFakeErmrest } from "@x/polling-catalog/testing";
import amqp from "amqplib";

const amqpUrl = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const noticeExchange = `jobs-example-${process.pid}`;
const logger = createConsoleLogger({ level: "warn", name: "example" });

/** Starts the fake with notices when the broker answers, without them otherwise. */
async function startCatalog(): Promise<{ fake: FakeErmrest; notices: boolean }> {
  const tables = { "S:Job": { key: ["id"], columns: ["state", "input", "result", "worker"] } };
  try {
    return { fake: await startFakeErmrest({ tables, amqpUrl, noticeExchange }), notices: true };
  } catch {
    return { fake: await startFakeErmrest({ tables }), notices: false };
  }
}

/**
 * One agent: claim up to 10 of up to 50 candidates (spread), work, mark the batch complete with one PUT; repeat
 * while there was work.
 */
function runAgent(name: string, fake: FakeErmrest, signal: AbortSignal, done: Map<string, number[]>) {
  const catalog = new PollingErmrestCatalog({
    scheme: "http",
    server: fake.server,
    catalogId: fake.catalogId,
    amqpServer: amqpUrl,
    noticeExchange,
    logger,
  });
  let idleEtag: string | null = null;
  const lookForWork = async () => {
    const result = await catalog.stateChangeOnce(
      "/entity/S:Job/state=queued?limit=50",
      "/attributegroup/S:Job/RID,expected:=state;state",
      (row: Row) => ({ RID: row.RID, expected: "queued", state: "running" }),
      idleEtag,
      { spread: true },
    );
    idleEtag = result.idleEtag;
    const completed: Row[] = [];
    for (const [job] of result.batch) {
      await sleep(20 + Math.random() * 60); // the "work"
      const square = (job.input as number) ** 2;
      completed.push({ RID: job.RID, state: "complete", result: square, worker: name });
    }
    // One write completes the whole batch: on ERMrest every write to the table conflicts with every other.
    if (completed.length > 0)
      await catalog.put("/attributegroup/S:Job/RID;state,result,worker", { json: completed });
    for (const [job] of result.batch) done.get(name)?.push(job.id as number);
    return result.batch.length > 0;
  };
  return catalog.blockingPoll(lookForWork, { pollingMs: 1_000, coalesceMs: 50, signal });
}

const { fake, notices } = await startCatalog();
const controller = new AbortController();
const stopSignals = onShutdownSignals(() => controller.abort());
const jobCount = 30;
// A writer beside the agents: its POST is sent again when ERMrest rolls it back (503 Transaction aborted.).
const writer = new ErmrestCatalog({ scheme: "http", server: fake.server, catalogId: fake.catalogId });
const insert = (from: number, to: number) =>
  writer.post("/entity/S:Job", {
    json: Array.from({ length: to - from }, (_, i) => ({ id: from + i, state: "queued", input: from + i })),
  });

console.log(
  `Fake ERMrest at ${fake.url}; ${notices ? "change notices on RabbitMQ" : "no broker: polling only"}.`,
);
await insert(1, jobCount / 2 + 1);
const done = new Map(["agent-1", "agent-2", "agent-3"].map((name) => [name, [] as number[]]));
const agents = [...done.keys()].map((name) => runAgent(name, fake, controller.signal, done));

// More jobs arrive while the agents run: notices (or the next poll) wake them.
await sleep(300);
await insert(jobCount / 2 + 1, jobCount + 1);

const started = Date.now();
while (!controller.signal.aborted && fake.rows("S:Job").some((row) => row.state !== "complete")) {
  await sleep(50);
  if (Date.now() - started > 60_000) throw new Error("the example did not finish within 60 s");
}
controller.abort();
await Promise.all(agents);
stopSignals();

for (const [name, ids] of done) console.log(`${name} completed ${ids.length} jobs: ${ids.join(", ")}`);
const rows = fake.rows("S:Job");
const complete = rows.filter((row) => row.state === "complete").length;
const claimedTwice = [...done.values()].flat().length - new Set([...done.values()].flat()).size;
console.log(`${complete}/${rows.length} jobs complete, ${claimedTwice} claimed twice.`);
await fake.close();
if (notices) {
  // ERMrest's exchange outlives its server; this one belongs to the example alone.
  const connection = await amqp.connect(amqpUrl);
  await (await connection.createChannel()).deleteExchange(noticeExchange);
  await connection.close();
}
