// Loaded with `node --require` into every process the startup bench measures (the `node -e 0` baseline too):
// at exit it writes the process's own CPU time and peak RSS, as JSON, to file descriptor 3 when the bench
// opened one. CommonJS, so that it does not start the ESM loader in a baseline that would not.
"use strict";
const { fstatSync, writeSync } = require("node:fs");

let open = false;
try {
  const stat = fstatSync(3);
  open = stat.isFIFO() || stat.isSocket();
} catch {}
if (open) {
  process.on("exit", () => {
    const usage = process.resourceUsage();
    writeSync(
      3,
      JSON.stringify({ userUs: usage.userCPUTime, systemUs: usage.systemCPUTime, maxRssKb: usage.maxRSS }),
    );
  });
}
