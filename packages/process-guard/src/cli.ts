#!/usr/bin/env node
import { GuardExit, runGuardCommand } from "./command.js";
// The x-guard command; everything but starting it lives in command.ts.
import { GuardError } from "./errors.js";

runGuardCommand(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (error: unknown) => {
    const text = error instanceof GuardError ? error.message : ((error as Error)?.stack ?? String(error));
    process.stderr.write(`x-guard: ${text}\n`);
    process.exit(GuardExit.FAILURE);
  },
);
