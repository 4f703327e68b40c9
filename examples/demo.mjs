// `pnpm demo`: runs the end-to-end pipeline of examples/pipeline from its TypeScript sources, through tsx
// and the `@x/source` export condition, so nothing has to be built first. Arguments are passed on
// (`pnpm demo --help` lists them), and the exit status is the pipeline's.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const tsx = import.meta.resolve("tsx");
const main = fileURLToPath(new URL("./pipeline/src/main.ts", import.meta.url));
const child = spawn(
  process.execPath,
  ["--conditions=@x/source", "--import", tsx, main, ...process.argv.slice(2)],
  {
    stdio: "inherit",
  },
);

// A terminal's Ctrl-C reaches the child directly (same process group), so SIGINT is only kept from killing
// this process before the child has cleaned up; forwarding it too would count as a second Ctrl-C, which
// forces the child out. SIGTERM, usually sent to this process alone, is passed on.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {
  if (child.exitCode === null) child.kill("SIGTERM");
});
child.on("error", (error) => {
  console.error(`pnpm demo: cannot start the pipeline: ${error.message}`);
  process.exitCode = 1;
});
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128 + (signal === "SIGINT" ? 2 : 15));
});
