// A command job of the demo, run by a worker as a child process: `node job-command.mjs <kind> <n>`.
// It prints "ready" once started (the worker starts the job's time budget then), then:
//   ok    works for a few tens of ms and exits 0;
//   hang  ignores SIGINT and never ends: the TimeGuard has to escalate to SIGTERM;
//   hog   fills 256 MiB at once and keeps it: the MemGuard stops it.
const [kind = "ok", n = "0"] = process.argv.slice(2);

if (kind === "ok") {
  process.stdout.write("ready\n");
  setTimeout(() => process.exit(0), 20 + (Number(n) % 30));
} else if (kind === "hang") {
  process.on("SIGINT", () => {});
  process.stdout.write("ready\n");
  setInterval(() => {}, 60_000);
} else if (kind === "hog") {
  process.stdout.write("ready\n");
  const hoard = [];
  for (let i = 0; i < 16; i++) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1));
  setInterval(() => hoard.length, 60_000);
} else {
  process.stderr.write(`job-command: unknown kind ${kind}\n`);
  process.exit(2);
}
