// publint on a packed tarball, as `publint run TARBALL --strict` does (warnings count as errors), with one
// exception: a bin whose first line is `#!/bin/sh`. publint takes only `#!/usr/bin/env …` for a shebang, but
// npm links a bin as it is and the kernel runs any `#!` line; x-guard's bin starts with a shell line that
// reads the caller's ignored signals before Node resets them (`/usr/bin/env sh` would cost one more exec on
// every start of a command whose start-up is measured).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { publint } from "publint";
import { formatMessage } from "publint/utils";

/** The messages of publint's strict run on `tarball` that fail it, formatted; empty when it passes. */
export async function publintFailures(tarball) {
  const data = readFileSync(tarball);
  const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const { messages, pkg } = await publint({ pack: { tarball: buffer }, strict: true, level: "warning" });
  return messages
    .filter((message) => message.type === "error" && !isShellBin(message, pkg, tarball))
    .map((message) => formatMessage(message, pkg) ?? message.code);
}

/** Whether `message` is publint's "no shebang" for a bin that starts with `#!/bin/sh`. */
function isShellBin(message, pkg, tarball) {
  if (message.code !== "BIN_FILE_NOT_EXECUTABLE") return false;
  const bin = message.path.slice(1).reduce((value, key) => value?.[key], pkg.bin);
  if (typeof bin !== "string") return false;
  const file = `package/${bin.replace(/^\.\//, "")}`;
  const head = execFileSync("tar", ["-xOzf", tarball, file], { maxBuffer: 64 << 20 }).subarray(0, 10);
  return head.toString() === "#!/bin/sh\n";
}
