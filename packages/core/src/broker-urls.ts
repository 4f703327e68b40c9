import { redactUrl } from "./redact.js";

/**
 * The addresses of a broker given as text: one, or the nodes of a cluster separated by white space (a URL
 * never contains white space), as `AMQP_URL`, a URL file or a space-separated option gives them. Empty text
 * gives an empty list.
 *
 * @param text - one address, or several separated by spaces, tabs or newlines
 */
export function splitUrls(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === "" ? [] : trimmed.split(/\s+/);
}

/**
 * The broker URL, or the URLs of a cluster's nodes: one URL as a string, several as a list ({@link splitUrls}
 * then unwrapped when there is only one, so a single-broker setup keeps its string).
 *
 * @param text - one URL, or several separated by white space
 */
export function brokerUrls(text: string): string | string[] {
  const urls = splitUrls(text);
  return urls.length === 1 ? (urls[0] as string) : urls;
}

/** The URLs of `url`, one or several, as a list. */
export const urlList = (url: string | readonly string[]): readonly string[] =>
  typeof url === "string" ? [url] : url;

/** `url`, one or several, with each secret (password, secret query parameters) shown as `***`. */
export const redactUrls = (url: string | readonly string[]): string | string[] =>
  typeof url === "string" ? redactUrl(url) : url.map((one) => redactUrl(one));

/**
 * The address to try at `turn` when the addresses are tried in rotation (a lost connection moves to the next
 * node, and after the last one back to the first): `urls[turn mod urls.length]`.
 *
 * @param urls - a non-empty list of addresses
 * @param turn - any integer ≥ 0: the index of the first address tried plus the attempts since
 */
export function urlAt<T>(urls: readonly T[], turn: number): T {
  if (urls.length === 0) throw new RangeError("urlAt: no address to choose from");
  return urls[turn % urls.length] as T;
}
