import { cliProgram } from "@x/core/internal";

/** The `x-supervisor` program: its version, and how each of its commands answers `--help` and usage errors. */
export const cli = cliProgram("x-supervisor", import.meta.url);
