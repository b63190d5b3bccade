import { defineConfig } from "tsup";

// Each command is its own entry so oclif (through the manifest) imports only the one
// that runs; shared code lands in chunks. The workspace libraries and the small pure
// dependencies are bundled in from source: one chunk loads faster than the ~150 files
// they are spread over (zod alone is 95). oclif (it reads its own package layout) and
// @kubernetes/client-node (loaded only to mint a token) stay external, as do execa's
// and write-file-atomic's process-level helpers.
export default defineConfig({
  entry: ["src/commands/**/*.ts", "!src/**/*.test.ts"],
  format: "esm",
  splitting: true,
  clean: true,
  target: "node22",
  dts: false,
  noExternal: [/^@nodekit\//, "zod", "js-yaml", "csv-parse", "ky"],
  esbuildOptions(options) {
    // Keep src/'s layout (dist/commands/<topic>/<name>.js, where package.json's oclif.commands
    // looks); without it esbuild drops the entries' common directory.
    options.outbase = "src";
    options.conditions = ["source"];
  },
});
