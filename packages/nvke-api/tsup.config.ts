import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/client-entry.ts", "src/schemas.ts"],
  format: "esm",
  dts: true,
  clean: true,
  target: "node22",
});
