/**
 * The transport's floor for the benchmarks, in its own process: a server that answers every line at once with
 * a fixed `JOB`, doing no other work. `raw-server-process.ts <socket>` listens on a Unix socket;
 * `raw-server-process.ts - <cert> <key> <ca>` listens for mutual TLS on 127.0.0.1 (a free port), as the
 * daemon's TLS listener does. Prints `{"event":"ready","port"}` once listening; SIGTERM stops it.
 */
import { readFileSync } from "node:fs";
import { createServer as createNetServer, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";

const [socket, certFile, keyFile, caFile] = process.argv.slice(2) as [string, string?, string?, string?];
const reply = "JOB pkg000001 1.1 1.2\n";

function answer(connection: Socket): void {
  connection.on("data", (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) connection.write(reply);
  });
  connection.on("end", () => connection.end());
  connection.on("error", () => {});
}

const server =
  certFile && keyFile && caFile
    ? createTlsServer(
        {
          cert: readFileSync(certFile),
          key: readFileSync(keyFile),
          ca: readFileSync(caFile),
          requestCert: true,
          rejectUnauthorized: true,
          minVersion: "TLSv1.3",
        },
        answer,
      )
    : createNetServer(answer);
const ready = () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : null;
  process.stdout.write(`${JSON.stringify({ event: "ready", port })}\n`);
};
if (socket === "-") server.listen(0, "127.0.0.1", ready);
else server.listen(socket, ready);
process.once("SIGTERM", () => {
  server.close();
  process.exit(0);
});
