import { defineConfig } from "tsup";
import { base, sortEntryPoints } from "../../tooling/tsup/base.ts";
import { hotChunk } from "../../tooling/tsup/hot-chunk.ts";
import { lazyOclifRequires } from "../../tooling/tsup/lazy-requires.ts";
import { builtinsWithoutFacades } from "../../tooling/tsup/node-builtins.ts";
import { importsPastIndexes } from "../../tooling/tsup/past-indexes.ts";

// Built the way nvkectl is (see apps/nvkectl/tsup.config.ts): each command its own entry,
// shared code in chunks, the workspace libraries, the small pure dependencies and oclif's
// core bundled in from source, src/run.ts as the bin's entry. What loads only when a phase
// runs (execa, proper-lockfile, tar, the prompts) stays external.
const EXTERNAL = ["typescript", "ts-node", "tsx", "@kubernetes/client-node", "undici"];

export default defineConfig({
  ...base,
  entry: ["src/launch.ts", "src/run.ts", "src/errors.ts", "src/commands/**/*.ts", "!src/**/*.test.ts"],
  splitting: true,
  dts: false,
  noExternal: [/^@nodekit\//, "zod", "js-yaml", "ipaddr.js", "semver", /^@oclif\/core/],
  // @kubernetes/client-node (and the undici it sends with) is reached only through @nodekit/kube's connect(), which nr never calls.
  external: EXTERNAL,
  // Node's built-ins through process.getBuiltinModule, not ES imports (tooling/tsup/node-builtins.ts).
  plugins: [builtinsWithoutFacades()],
  // oclif's modules are evaluated when first used (lazy-requires.ts); a library's names are
  // imported from the files that define them, not its index (past-indexes.ts).
  esbuildPlugins: [lazyOclifRequires({ external: EXTERNAL }), importsPastIndexes()],
  // dist/metafile-esm.json: which source modules each file holds (written by hotChunk below).
  metafile: true,
  // What every command's start loads (the launcher's fast path: oclif's command class and the
  // kit), merged into one file after esbuild, as nvkectl's (tooling/tsup/hot-chunk.ts).
  onSuccess: hotChunk({ hot: ["../../packages/cli-kit/src/launch/fast.ts"] }),
  esbuildOptions(options) {
    sortEntryPoints(options);
    options.outbase = "src";
    options.conditions = ["source"];
  },
});
