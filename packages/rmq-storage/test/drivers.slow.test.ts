// The database drivers are optional peer dependencies, loaded when the first storage of their kind opens.
// Each check runs in a real child process on a copy of the package installed without the drivers.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { installStandIn, packageCopy, runModuleChild } from "@x/test-support/package-copy";
import { describe, expect, it } from "vitest";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
/** A copy of @x/rmq-storage installed with its dependencies, but neither better-sqlite3 nor pg. */
const copyWithoutDrivers = () => packageCopy(packageDir, "@x/rmq-storage", ["@x/core", "amqplib"]);

/** What opening each kind of storage does in a child run in `root`. */
async function openOutcomes(root: string) {
  return (await runModuleChild(
    root,
    `import { XError } from "@x/core";
     const storage = await import("@x/rmq-storage");
     const outcome = async (open) => {
       try { await open(); return "opened"; }
       catch (error) { return { code: XError.is(error) ? error.code : String(error), message: error.message }; }
     };
     console.log(JSON.stringify({
       exports: typeof storage.RmqStorageClient.connect,
       sqlite: await outcome(() => storage.openSqliteStorage(":memory:")),
       postgres: await outcome(() => storage.openPostgresStorage("postgres://127.0.0.1:1/x")),
     }));`,
  )) as Record<"sqlite" | "postgres", { code: string; message: string }> & { exports: string };
}

describe("database drivers", () => {
  it("import without either driver; opening a storage names the package to install", async () => {
    const result = await openOutcomes(copyWithoutDrivers());
    expect(result.exports).toBe("function");
    expect(result.sqlite.code).toBe("ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE");
    expect(result.sqlite.message).toContain("npm install better-sqlite3");
    expect(result.postgres.code).toBe("ERR_X_RMQ_STORAGE_DRIVER_UNAVAILABLE");
    expect(result.postgres.message).toContain("npm install pg");
  });

  it("refuse an unsupported major before loading it, naming both versions", async () => {
    const root = copyWithoutDrivers();
    installStandIn(root, "better-sqlite3", "11.10.0");
    installStandIn(root, "pg", "7.18.2");
    const result = await openOutcomes(root);
    expect(result.sqlite.code).toBe("ERR_X_RMQ_STORAGE_DRIVER_VERSION");
    expect(result.sqlite.message).toContain("better-sqlite3 ^12.0.0 || ^13.0.0, but 11.10.0 is installed");
    expect(result.postgres.code).toBe("ERR_X_RMQ_STORAGE_DRIVER_VERSION");
    expect(result.postgres.message).toContain("pg ^8.0.0, but 7.18.2 is installed");
  });
});
