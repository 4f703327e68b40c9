import { packageBuild } from "../../scripts/build-preset.ts";

export default packageBuild({
  index: "src/index.ts",
  internal: "src/internal.ts",
  "private-files": "src/private-files.ts",
});
