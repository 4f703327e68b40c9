// The benchmark (bench/index.ts) reaches the services through this path; tests import test-support directly.
export { AMQP_URL, PG_URL, requireService } from "../../../test-support/services.js";
export { uniqueName } from "../../../test-support/unique-name.js";
