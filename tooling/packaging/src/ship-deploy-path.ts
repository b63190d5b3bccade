import { cp, rm } from "node:fs/promises";
import { join } from "node:path";

// apps/nvkectl's prepack and postpack: the repository's deploy/nico is copied into the package
// (deploy/nico, which package.json's "files" ships) before `pnpm pack` / `pnpm publish`, and the
// copy removed after, so an installed nvkectl finds its deploy path inside itself
// (apps/nvkectl/src/services/shipped.ts). Run from the package's directory.
//
//   node ../../tooling/packaging/src/ship-deploy-path.ts copy|remove

const mode = process.argv[2];
const target = join(process.cwd(), "deploy");
if (mode === "copy") {
  await rm(target, { recursive: true, force: true });
  await cp(join(process.cwd(), "..", "..", "deploy", "nico"), join(target, "nico"), { recursive: true });
} else if (mode === "remove") {
  await rm(target, { recursive: true, force: true });
} else {
  process.stderr.write("usage: ship-deploy-path.ts copy|remove\n");
  process.exitCode = 2;
}
