// A command job of the demo, run by a worker as a child process: `node job-command.mjs <kind> <n>`.
// It prints "ready" once started (the worker starts the job's time budget then), then:
//   ok    works for a few tens of ms and exits 0;
//   hang  ignores SIGINT and never ends: the TimeGuard has to escalate to SIGTERM;
//   hog   allocates 16 MiB every few ms (up to 512 MiB) and waits: the MemGuard stops it.
const [kind = "ok", n = "0"] = process.argv.slice(2);
process.stdout.write("ready\n");

if (kind === "ok") {
  setTimeout(() => process.exit(0), 20 + (Number(n) % 30));
} else if (kind === "hang") {
  process.on("SIGINT", () => {});
  setInterval(() => {}, 60_000);
} else if (kind === "hog") {
  const hoard = [];
  const grab = () => {
    if (hoard.length < 32) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1));
    setTimeout(grab, 5);
  };
  grab();
} else {
  process.stderr.write(`job-command: unknown kind ${kind}\n`);
  process.exit(2);
}
