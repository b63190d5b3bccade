import { packFluxArtifact } from "./flux-artifact.ts";
import type { DeployPathFs } from "./load.ts";

// For this package's tests: a deploy path read from memory, and a Flux artifact to push or lay out.

/** A DeployPathFs over `files` (absolute path → text): what is not there reads as missing. */
export function memoryFs(files: Record<string, string>): DeployPathFs {
  return {
    readFile: async (path) => files[path],
    list: async (path) => {
      const prefix = `${path}/`;
      const names = Object.keys(files)
        .filter((file) => file.startsWith(prefix))
        .map((file) => file.slice(prefix.length));
      if (names.length === 0) return undefined;
      const entries = new Map<string, boolean>();
      for (const name of names) entries.set(name.split("/")[0] ?? name, name.includes("/"));
      return [...entries].map(([name, directory]) => ({ name, directory }));
    },
  };
}

/** The Flux artifact of `item` whose one file manifests.yaml is `manifests`: source "s", revision "r", at the epoch. */
export const packedManifests = (item: string, manifests: string) =>
  packFluxArtifact({
    item,
    files: { "manifests.yaml": manifests },
    source: "s",
    revision: "r",
    created: "1970-01-01T00:00:00Z",
  });
