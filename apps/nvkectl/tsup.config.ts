import { defineConfig } from "tsup";

// Each command is its own entry so oclif (through the manifest) imports only the one
// that runs; shared code lands in chunks. Workspace libraries stay external.
export default defineConfig({
  entry: ["src/commands/**/*.ts", "!src/**/*.test.ts"],
  format: "esm",
  splitting: true,
  clean: true,
  target: "node22",
  dts: false,
  // Keep src/'s layout (dist/commands/<topic>/<name>.js, where package.json's oclif.commands
  // looks); without it esbuild drops the entries' common directory.
  esbuildOptions(options) {
    options.outbase = "src";
  },
});
