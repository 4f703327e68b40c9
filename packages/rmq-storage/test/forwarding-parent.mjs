// A parent script as users write them: it runs `x-rmq-storage serve` (from the sources) as a child in its
// own process group and, on SIGINT (a terminal's Ctrl-C, which also reaches the child), forwards SIGTERM to
// the child and waits for it. Prints "serve exited <code or signal>" and exits 0 when the child exited 0.
// Usage: node forwarding-parent.mjs <serve arguments…>
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const child = spawn(
  process.execPath,
  ["--import", "tsx", "--conditions=@x/source", cli, "serve", ...process.argv.slice(2)],
  { stdio: "inherit" },
);
process.on("SIGINT", () => child.kill("SIGTERM"));
child.on("exit", (code, signal) => {
  process.stdout.write(`serve exited ${code ?? signal}\n`);
  process.exit(code === 0 ? 0 : 1);
});
