import { describe, expect, it } from "vitest";
import { amqpRefusal } from "./amqp-refusal.js";

describe("amqpRefusal", () => {
  it("gives the broker's reason for a refused login", () => {
    expect(
      amqpRefusal(
        'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
      ),
    ).toBe(
      'the broker refused the login: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"',
    );
    expect(amqpRefusal("SASL mechanism PLAIN is not supported")).toBe(
      "the broker refused the login: SASL mechanism PLAIN is not supported",
    );
  });

  it("names the refused virtual host from the URL, decoded, or says none when it has no path", () => {
    const closed = "Expected ConnectionOpenOk; got <ConnectionClose channel:0>";
    expect(amqpRefusal(closed, "amqp://guest:guest@127.0.0.1:5672/tenant%2F1")).toContain(
      'virtual host "tenant/1" (530 NOT_ALLOWED',
    );
    expect(amqpRefusal(closed, "amqp://127.0.0.1")).toContain('virtual host "/"');
    expect(amqpRefusal(closed)).toMatch(/^the broker refused the virtual host \(530 NOT_ALLOWED/);
  });

  it("is undefined for what is no refusal", () => {
    expect(amqpRefusal("connect ECONNREFUSED 127.0.0.1:1")).toBeUndefined();
    expect(amqpRefusal("Socket closed abruptly during opening handshake")).toBeUndefined();
  });
});
