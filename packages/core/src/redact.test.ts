import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { inspectAs, inspectCustom, isSecretParameter, redactedMark, redactUrl } from "./redact.js";

describe("redactUrl", () => {
  it("replaces the password and keeps the rest", () => {
    expect(redactUrl("amqp://user:s3cret-pw@host:5672/vh")).toBe("amqp://user:***@host:5672/vh");
    expect(redactUrl("postgres://postgres:s3cret-pw@db/x?schema=a")).toBe(
      "postgres://postgres:***@db/x?schema=a",
    );
  });

  it("leaves URLs without a password alone", () => {
    expect(redactUrl("amqp://host/")).toBe("amqp://host/");
    expect(redactUrl("amqp://user@host/")).toBe("amqp://user@host/");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it("masks everything up to the last @ when the password holds an unencoded @, / or #", () => {
    for (const url of [
      "amqp://u:p@ss-word1@host/",
      "amqp://u:pa/ss-word1@host/",
      "amqp://u:pa#ss-word1@host/",
    ]) {
      const shown = redactUrl(url);
      expect(shown).not.toContain("ss-word1");
      expect(shown).toBe(`amqp://${redactedMark}@host/`);
    }
    expect(redactUrl("amqp://u:s3cret-pw@[bad/")).toBe("amqp://***@[bad/");
  });

  it.each([
    ["a password with an unencoded ?", "amqp://agent:1?s3cret@broker", "amqp://***@broker"],
    ["a scheme without authority", "x:agent:s3cret@broker", "***@broker"],
    ["a password and no user", "amqps://:s3cret@broker", "amqps://:***@broker"],
  ])("masks %s", (_case, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});

/*
 * Every connection parameter libpq documents (PostgreSQL 15 to 18), and whether its value is a secret. The
 * secrets are the ones libpq itself hides (`password`, `sslpassword`, `oauth_client_secret`: marked "*" in
 * PQconndefaults) and the SCRAM keys, from which a client can log in without the password. The rest stay
 * visible: `passfile`, `sslcert`, `sslkey`, `sslrootcert`, `sslcrl`, `sslcrldir` and `sslkeylogfile` name
 * files (or, for `sslkey`, an OpenSSL engine's key), which their own permissions protect; `user`,
 * `requirepeer`, `krbsrvname`, `service` and `oauth_client_id` are names that the server or the identity
 * provider already knows; the others are modes, limits and addresses.
 */
const libpqSecrets = [
  "password",
  "sslpassword",
  "oauth_client_secret",
  "scram_client_key",
  "scram_server_key",
];
const libpqVisible = [
  "host hostaddr port dbname user passfile require_auth channel_binding connect_timeout client_encoding",
  "options application_name fallback_application_name keepalives keepalives_idle keepalives_interval",
  "keepalives_count tcp_user_timeout replication gssencmode sslmode requiressl sslnegotiation sslcompression",
  "sslcert sslkey sslkeylogfile sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer",
  "ssl_min_protocol_version ssl_max_protocol_version min_protocol_version max_protocol_version krbsrvname",
  "gsslib gssdelegation service target_session_attrs load_balance_hosts oauth_issuer oauth_client_id",
  "oauth_scope",
]
  .join(" ")
  .split(" ");

describe("redactUrl and libpq's connection parameters", () => {
  it.each(libpqSecrets)("hides %s in a URL and in a keyword=value string", (name) => {
    expect(isSecretParameter(name)).toBe(true);
    expect(redactUrl(`postgres://u@db:5432/x?schema=s&${name}=s3cret-value&sslmode=require`)).toBe(
      `postgres://u@db:5432/x?schema=s&${name}=***&sslmode=require`,
    );
    expect(redactUrl(`host=db ${name}=s3cret-value dbname=x`)).toBe(`host=db ${name}=*** dbname=x`);
    expect(redactUrl(`host=db ${name} = 's3cret \\' value' dbname=x`)).toBe(`host=db ${name} = *** dbname=x`);
  });

  it.each(libpqVisible)("shows %s, which is no secret", (name) => {
    expect(isSecretParameter(name)).toBe(false);
    expect(redactUrl(`postgres://u@db/x?${name}=plain-value`)).toBe(`postgres://u@db/x?${name}=plain-value`);
    expect(redactUrl(`host=db ${name}=plain-value`)).toBe(`host=db ${name}=plain-value`);
  });

  it("hides the user information's password and every secret parameter together", () => {
    expect(redactUrl("postgres://u:p4ss@h/db?password=s3cret&sslpassword=s3cret2&sslkey=/k.pem")).toBe(
      "postgres://u:***@h/db?password=***&sslpassword=***&sslkey=/k.pem",
    );
    expect(redactUrl("postgresql://u@h/db?PassWord=s3cret&pass%77ord=s3cret2&password")).toBe(
      "postgresql://u@h/db?PassWord=***&pass%77ord=***&password",
    );
  });

  it("masks a value whole, whatever it holds, up to the next & or #", () => {
    for (const value of [
      "a;b-s3cret",
      "a?b=s3cret",
      "a@b-s3cret",
      "a b s3cret",
      "a%26b-s3cret",
      "a/b@s3cret",
    ]) {
      const shown = redactUrl(`postgres://u@h/db?password=${value}&schema=s`);
      expect(shown).not.toContain("s3cret");
      expect(shown).toContain("schema=s");
    }
    // An unterminated quote runs to the end, as libpq reads it.
    expect(redactUrl("host=h password='s3cret dbname=x")).toBe("host=h password=***");
  });

  it("hides the user information of a malformed URL and its secret parameters", () => {
    expect(redactUrl("postgres://u:s3cret@[bad/db?password=s3cret2")).toBe(
      "postgres://***@[bad/db?password=***",
    );
    // The only @ inside a secret value, after an unencoded ? in the password: all but the scheme is hidden.
    expect(redactUrl("amqp://u:PW?token=x@s3cret@host")).toBe("amqp://***");
    expect(redactUrl("postgres://u:p4ss@h/db?password=a@s3cret")).toBe("postgres://***@h/db?password=***");
  });
});

describe("redactUrl and tokens in other URLs", () => {
  it.each([
    ["token", "https://api.example/v1?token=s3cret&page=2", "https://api.example/v1?token=***&page=2"],
    ["access_token", "https://h/cb#access_token=s3cret&state=x", "https://h/cb#access_token=***&state=x"],
    [
      "api_key",
      "http://h/?api_key=s3cret&api-key=s3cret&apikey=s3cret",
      "http://h/?api_key=***&api-key=***&apikey=***",
    ],
    ["secret", "https://h/?secret=s3cret&client_secret=s3cret", "https://h/?secret=***&client_secret=***"],
    [
      "signed URLs",
      "https://b.example/o?X-Amz-Signature=s3cret&X-Amz-Security-Token=s3cret&sig=s3cret&X-Amz-Date=1",
      "https://b.example/o?X-Amz-Signature=***&X-Amz-Security-Token=***&sig=***&X-Amz-Date=1",
    ],
    [
      "passphrase",
      "amqps://h/?passphrase=s3cret&cacertfile=/ca.pem",
      "amqps://h/?passphrase=***&cacertfile=/ca.pem",
    ],
    ["redis", "redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"],
  ])("hides %s", (_case, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it("leaves names that only contain a secret word alone", () => {
    for (const name of ["sslkey", "passfile", "keepalives", "tokens_per_page", "authority", "heartbeat"])
      expect(redactUrl(`amqp://h/?${name}=v`)).toBe(`amqp://h/?${name}=v`);
  });
});

describe("inspectAs", () => {
  it("shows the shape under the class name, and nothing below depth 0", () => {
    class Holder {
      [inspect.custom](depth: number, options: object, insp: typeof inspect) {
        return inspectAs("Holder", { url: "amqp://u:***@h/" }, depth, options, insp);
      }
    }
    expect(inspect(new Holder())).toBe("Holder { url: 'amqp://u:***@h/' }");
    expect(inspect({ a: { b: new Holder() } }, { depth: 1 })).toContain("Holder {}");
  });
});

describe("inspectCustom", () => {
  it("is util.inspect.custom", () => {
    expect(inspectCustom).toBe(inspect.custom);
  });
});
