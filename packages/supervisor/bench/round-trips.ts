import type { SupervisorClient } from "../src/index.js";

/**
 * Loops each connected client through `perWorker` round trips (READY first, then DONE→JOB) at once, and returns
 * every round trip's latency in ms, from the write to the complete reply. Closes the clients.
 */
export async function timeRoundTrips(clients: SupervisorClient[], perWorker: number): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(
    clients.map(async (client) => {
      let start = performance.now();
      let job = await client.ready();
      latencies.push(performance.now() - start);
      for (let i = 1; i < perWorker && job; i++) {
        start = performance.now();
        job = await client.done(job.attrPath, 0);
        latencies.push(performance.now() - start);
      }
      await client.close();
    }),
  );
  return latencies;
}
