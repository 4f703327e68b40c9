/**
 * A child process for the lease test: claims up to 5 rows with a lease, prints `holding <ids>`, then works for
 * ever on them (until it is killed). Environment: SERVER (the fake's host:port), LEASE_MS.
 */
import { leaseClaim, PollingErmrestCatalog } from "../src/index.js";

const catalog = new PollingErmrestCatalog({ scheme: "http", server: process.env.SERVER ?? "", catalogId: 1 });
const lease = leaseClaim({ table: "S:Job", owner: "child", leaseMs: Number(process.env.LEASE_MS) });
const { batch } = await catalog.stateChangeOnce(lease.queryPath, lease.updatePath, lease.transform, null, {
  spread: true,
  claimRows: 5,
});
process.stdout.write(`holding ${batch.map(([row]) => row.id).join(",")}\n`);
setInterval(() => {}, 60_000); // the job that never ends
