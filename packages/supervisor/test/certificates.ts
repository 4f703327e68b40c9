import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** A certificate and its key, as PEM files. */
export interface CertificateFiles {
  certFile: string;
  keyFile: string;
}

/** A certificate authority whose key can sign more certificates. */
export interface TestCa extends CertificateFiles {
  /** The CA's certificate: what the other side's `caFile` must be. */
  caFile: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

function newKey(dir: string, name: string): string {
  const keyFile = join(dir, `${name}.key`);
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile]);
  return keyFile;
}

/**
 * Makes a self-signed CA with the `openssl` command, in `dir`.
 *
 * @param name - file names and the CA's common name
 */
export function makeCa(dir: string, name: string): TestCa {
  const keyFile = newKey(dir, name);
  const certFile = join(dir, `${name}.pem`);
  openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    keyFile,
    "-out",
    certFile,
    "-subj",
    `/CN=${name}`,
    "-days",
    "2",
  ]);
  return { certFile, keyFile, caFile: certFile };
}

/**
 * Makes a certificate signed by `ca` with the `openssl` command, in `dir`.
 *
 * @param subject - the subject, `/O=x/CN=worker-1`
 * @param options - `server: true` for the daemon's certificate (names 127.0.0.1 and localhost, serverAuth),
 *   otherwise a client certificate; `days` of validity, negative for one that has already expired
 */
export function makeCertificate(
  dir: string,
  ca: TestCa,
  name: string,
  subject: string,
  { server = false, days = 2 }: { server?: boolean; days?: number } = {},
): CertificateFiles {
  const keyFile = newKey(dir, name);
  const request = join(dir, `${name}.csr`);
  const extensions = join(dir, `${name}.ext`);
  const certFile = join(dir, `${name}.pem`);
  writeFileSync(
    extensions,
    server
      ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
      : "extendedKeyUsage=clientAuth\n",
  );
  openssl(dir, ["req", "-new", "-key", keyFile, "-out", request, "-subj", subject]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    request,
    "-CA",
    ca.certFile,
    "-CAkey",
    ca.keyFile,
    "-CAcreateserial",
    "-days",
    String(days),
    "-extfile",
    extensions,
    "-out",
    certFile,
  ]);
  return { certFile, keyFile };
}

/** Everything the TLS tests need: one CA with a server and client certificates, and a stranger's CA. */
export interface TestPki {
  ca: TestCa;
  server: CertificateFiles;
  /** Signed by `ca`, subject `/O=x-test/CN=worker-1`. */
  client: CertificateFiles;
  /** Signed by `ca`, subject `/O=x-test/CN=worker-2`. */
  client2: CertificateFiles;
  /** Signed by `ca`, expired yesterday. */
  expired: CertificateFiles;
  /** Signed by another CA. */
  stranger: CertificateFiles;
}

/** Subjects of {@link TestPki}'s client certificates, as the daemon logs and records them. */
export const clientSubject = "O=x-test, CN=worker-1";
export const client2Subject = "O=x-test, CN=worker-2";

/** Makes a {@link TestPki} in `dir`. */
export function makePki(dir: string): TestPki {
  const ca = makeCa(dir, "test-ca");
  const other = makeCa(dir, "other-ca");
  return {
    ca,
    server: makeCertificate(dir, ca, "server", "/CN=supervisor", { server: true }),
    client: makeCertificate(dir, ca, "client", "/O=x-test/CN=worker-1"),
    client2: makeCertificate(dir, ca, "client2", "/O=x-test/CN=worker-2"),
    expired: makeCertificate(dir, ca, "expired", "/O=x-test/CN=expired", { days: -1 }),
    stranger: makeCertificate(dir, other, "stranger", "/O=x-test/CN=stranger"),
  };
}
