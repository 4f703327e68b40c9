import { request } from "node:http";

/**
 * Sends `method` (default `GET`) to `url` on a connection of its own, with the `Host` header `host`: what a
 * browser sends to a loopback listener after DNS rebinding, when `host` is the attacker's name.
 *
 * @returns the status and the body as text
 */
export function requestWithHost(
  url: string,
  host: string,
  method = "GET",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { method, headers: { host }, agent: false }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    })
      .on("error", reject)
      .end();
  });
}
