import type { Logger } from "@x/core";

/**
 * Logs a failure of the CLI as one readable line: `<what>: <the error's message>`, with the error's code
 * (if any) as a field, rather than the whole error serialized into the line.
 *
 * @param logger - the command's logger
 * @param what - what failed ("cannot start")
 * @param error - why
 */
export function logFailure(logger: Logger, what: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null | undefined)?.code;
  logger.error(typeof code === "string" ? { code } : {}, `${what}: ${message}`);
}
