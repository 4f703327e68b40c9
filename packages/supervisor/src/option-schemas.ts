import { v } from "@x/core/internal";

/**
 * The schema of an integer option from `min` to `max`; `what` names it in the error: `a TCP port` gives
 * `a TCP port (integer 0 to 65535)`.
 */
export function integer(min: number, max: number, what: string) {
  const error = `${what} (integer ${min} to ${max})`;
  return v.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}
