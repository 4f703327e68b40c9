/** amqplib's words when the broker closes the connection instead of opening the virtual host (530 NOT_ALLOWED). */
const VHOST_REFUSED = /^Expected ConnectionOpenOk; got <ConnectionClose|NOT[-_]ALLOWED/;

/** amqplib's words when the broker refuses the login during the handshake (403 ACCESS_REFUSED). */
const LOGIN_REFUSED = /^Handshake terminated by server: (.*)$/s;

/** amqplib's words when the broker offers none of the client's login mechanisms. */
const NO_MECHANISM = /^SASL mechanism/;

/**
 * Why an AMQP broker refused a connection, in one line, from the message of amqplib's `connect` error; or
 * `undefined` when the message is no refusal (nothing answered, a reset, a timeout). A refusal is final:
 * trying again cannot help.
 *
 * @param message - the error's message
 * @param url - the URL that was tried, to name the virtual host (amqplib reports its refusal without the
 *   broker's text); without it the host is not named
 */
export function amqpRefusal(message: string, url?: string): string | undefined {
  const login = LOGIN_REFUSED.exec(message);
  if (login) return `the broker refused the login: ${login[1]}`;
  if (NO_MECHANISM.test(message)) return `the broker refused the login: ${message}`;
  if (VHOST_REFUSED.test(message)) {
    const host = url === undefined ? "" : ` ${JSON.stringify(virtualHost(url))}`;
    return `the broker refused the virtual host${host} (530 NOT_ALLOWED: it does not exist, or the user may not open it)`;
  }
  return undefined;
}

/** The virtual host a broker URL names: its path without the leading `/`, decoded; `/` when it has none. */
function virtualHost(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : "";
  return path.length > 1 ? decodeURIComponent(path.slice(1)) : "/";
}
