import { defineConfig } from "tsup";
import { base, sortEntryPoints } from "../../tooling/tsup/base.ts";
import { hotChunk } from "../../tooling/tsup/hot-chunk.ts";
import { lazyOclifRequires } from "../../tooling/tsup/lazy-requires.ts";
import { builtinsWithoutFacades } from "../../tooling/tsup/node-builtins.ts";
import { importsPastIndexes } from "../../tooling/tsup/past-indexes.ts";

// Each command is its own entry so oclif (through the manifest) imports only the one
// that runs; shared code lands in chunks. The workspace libraries, the small pure
// dependencies and oclif's core are bundled in from source: one chunk loads faster than
// the ~250 files they are spread over (oclif's core alone is ~100 CommonJS modules, ≈ 15 ms
// of every start). src/run.ts is the bin's entry, so the bin and the commands share one copy
// of oclif. oclif's plugins (autocomplete, plugins) stay packages of their own,
// with their own oclif, as oclif expects. @kubernetes/client-node (loaded only to mint a
// token) is bundled into a chunk of its own that only a token mint loads; so is execa (a chunk
// the process runner imports on its first call: bundled, its ~60 modules and their package
// lookups cost one file; issue 26's upgrade plan). proper-lockfile stays external, as do the
// TypeScript loaders oclif looks for only in development.
const EXTERNAL = ["typescript", "ts-node", "tsx"];

export default defineConfig({
  ...base,
  entry: [
    "src/launch.ts",
    "src/run.ts",
    "src/errors.ts",
    "src/commands/**/*.ts",
    "src/hooks/*.ts",
    "!src/**/*.test.ts",
  ],
  splitting: true,
  dts: false,
  // dist/metafile-esm.json: which source modules each chunk holds (the start-up guard test reads it).
  metafile: true,
  noExternal: [/^@nodekit\//, "zod", "js-yaml", "csv-parse", /^@oclif\/core/, "execa"],
  external: EXTERNAL,
  // Node's built-ins through process.getBuiltinModule, not ES imports (tooling/tsup/node-builtins.ts).
  plugins: [builtinsWithoutFacades()],
  // oclif's modules are evaluated when first used (lazy-requires.ts); a library's names are
  // imported from the files that define them, not its index (past-indexes.ts).
  esbuildPlugins: [lazyOclifRequires({ external: EXTERNAL }), importsPastIndexes()],
  // What a cached read loads, merged into one file after esbuild (tooling/tsup/hot-chunk.ts):
  // the launcher's fast path, the site and controller services, and `get clusters`.
  onSuccess: hotChunk({
    hot: [
      "../../packages/cli-kit/src/launch/fast.ts",
      "src/services/sites.ts",
      "src/services/controller.ts",
      "src/commands/get/clusters.ts",
    ],
  }),
  esbuildOptions(options) {
    sortEntryPoints(options);
    // Keep src/'s layout (dist/commands/<topic>/<name>.js, where package.json's oclif.commands
    // looks); without it esbuild drops the entries' common directory.
    options.outbase = "src";
    options.conditions = ["source"];
  },
});
