import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/names.ts"],
  format: "esm",
  dts: true,
  clean: true,
  target: "node22",
});
