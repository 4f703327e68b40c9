import { optionError, redactUrl } from "@x/core/internal";
import { ErrorCode, RmqStorageError } from "./errors.js";

/**
 * Refuses a `url` option (or an element of a list of them) that is not a parseable `amqp://` or `amqps://` URL, and a string `storage` option
 * that is not `sqlite:PATH` or `postgres://…`, showing the value with its password as `***` (the options'
 * validator would print it whole). Anything else is left to the validator.
 *
 * @throws `ERR_X_RMQ_STORAGE_INVALID_OPTION`
 */
export function checkSecretOptions(options: unknown): void {
  if (typeof options !== "object" || options === null) return;
  const { url, storage } = options as { url?: unknown; storage?: unknown };
  for (const one of Array.isArray(url) ? url : [url])
    if (typeof one === "string" && !(/^amqps?:\/\/./.test(one) && URL.canParse(one)))
      throw optionError(
        ErrorCode.INVALID_OPTION,
        "url",
        redactUrl(one),
        "an amqp:// or amqps:// URL",
        RmqStorageError,
      );
  if (typeof storage === "string" && !(/^sqlite:.+/.test(storage) || /^postgres(ql)?:\/\/./.test(storage)))
    throw optionError(
      ErrorCode.INVALID_OPTION,
      "storage",
      redactUrl(storage),
      "a storage factory, sqlite:PATH or postgres://…",
      RmqStorageError,
    );
}
