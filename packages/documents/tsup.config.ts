import { defineConfig } from "tsup";
import { library } from "../../tooling/tsup/base.ts";

export default defineConfig(
  library({
    entry: ["src/index.ts", "src/names.ts", "src/fields.ts", "src/plain-yaml.ts", "src/text.ts", "src/input.ts"],
  }),
);
