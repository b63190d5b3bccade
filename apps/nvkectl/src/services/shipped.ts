import { access } from "node:fs/promises";
import { join } from "node:path";

/**
 * The deploy path nvkectl ships: `deploy/nico` inside the installed package (the package's
 * prepack copies the repository's deploy/nico there, so an `npm install -g @nodekit/nvkectl`
 * carries it), or, in a clone of the repository, the repository's own deploy/nico.
 * `root` is the package's directory (oclif's config.root).
 */
export async function shippedDeployPath(root: string): Promise<string> {
  const inPackage = join(root, "deploy", "nico");
  const found = await access(join(inPackage, "nvke-deploy.yaml")).then(
    () => true,
    () => false,
  );
  return found ? inPackage : join(root, "..", "..", "deploy", "nico");
}
