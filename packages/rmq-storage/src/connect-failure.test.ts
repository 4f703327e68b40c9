import { describe, expect, it } from "vitest";
import { classifyConnectFailure } from "./connect-failure.js";

const url = "amqp://guest:guest@127.0.0.1:5672/tenant%2F1";
const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("classifyConnectFailure", () => {
  it("a refusal by the broker is a configuration error, with the broker's reason", () => {
    const login = classifyConnectFailure(
      new Error(
        'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
      ),
      url,
    );
    expect(login).toEqual({
      kind: "config",
      reason:
        'the broker refused the login: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
    });
    // amqplib words the refusal of a virtual host without the broker's text: the host is named from the URL.
    const vhost = classifyConnectFailure(
      new Error("Expected ConnectionOpenOk; got <ConnectionClose channel:0>"),
      url,
    );
    expect(vhost.kind).toBe("config");
    expect(vhost.reason).toContain('virtual host "tenant/1"');
    expect(
      classifyConnectFailure(errno("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"), url).kind,
    ).toBe("config");
  });

  it("nothing answering is 'unavailable'; anything else is transient", () => {
    expect(classifyConnectFailure(errno("ECONNREFUSED", "connect ECONNREFUSED"), url).kind).toBe(
      "unavailable",
    );
    expect(classifyConnectFailure(errno("ENOTFOUND", "getaddrinfo ENOTFOUND x"), url).kind).toBe(
      "unavailable",
    );
    expect(classifyConnectFailure(errno("EAI_AGAIN", "getaddrinfo EAI_AGAIN x"), url).kind).toBe("transient");
    expect(classifyConnectFailure(errno("ECONNRESET", "read ECONNRESET"), url).kind).toBe("transient");
    expect(classifyConnectFailure(new Error("Socket closed abruptly during opening handshake"), url)).toEqual(
      { kind: "transient", reason: "Socket closed abruptly during opening handshake" },
    );
    expect(classifyConnectFailure("not an error", url)).toEqual({
      kind: "transient",
      reason: "not an error",
    });
  });
});
