/** One call a {@link recordingLogger} received. */
export interface LogRecord {
  level: "debug" | "info" | "warn" | "error";
  /** The fields object, or `{}` for a message-only call. */
  fields: Record<string, unknown>;
  /** The message, or `""` for a fields-only call. */
  msg: string;
}

/**
 * A pino-shaped logger (`debug`/`info`/`warn`/`error`, called as `(fields, msg?)` or `(msg)`) that keeps
 * every call, for assertions on what a component logged.
 *
 * @returns `logger` to pass to the component, `records` in call order, and `messages(level?)`: the
 *   messages of one level (of every level when omitted), in call order.
 */
export function recordingLogger() {
  const records: LogRecord[] = [];
  const method =
    (level: LogRecord["level"]) =>
    (first: object | string, msg?: string): void => {
      if (typeof first === "string") records.push({ level, fields: {}, msg: first });
      else records.push({ level, fields: first as Record<string, unknown>, msg: msg ?? "" });
    };
  return {
    records,
    logger: { debug: method("debug"), info: method("info"), warn: method("warn"), error: method("error") },
    messages: (level?: LogRecord["level"]): string[] =>
      records.filter((record) => level === undefined || record.level === level).map((record) => record.msg),
  };
}
