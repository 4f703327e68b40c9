import { packageBuild } from "../../scripts/build-preset.ts";

export default packageBuild({
  index: "src/index.ts",
  redis: "src/redis.ts",
  nats: "src/nats.ts",
  "rabbitmq-stream": "src/rabbitmq-stream.ts",
});
