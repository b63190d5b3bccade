import { defineConfig } from "tsup";
import { library } from "../../tooling/tsup/base.ts";

export default defineConfig(
  library({ entry: ["src/index.ts", "src/client-entry.ts", "src/schemas.ts", "src/test-support.ts"] }),
);
