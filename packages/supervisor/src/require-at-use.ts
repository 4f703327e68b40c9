import { createRequire } from "node:module";

/**
 * `require` for the CommonJS dependencies that synchronous code loads at first use (better-sqlite3,
 * prom-client), so that importing the package does not load them (issue #31: import time). Node caches each
 * module after its first load.
 */
export const requireAtUse = createRequire(import.meta.url);
