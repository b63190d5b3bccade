import { ExitCode, UserError } from "@nodekit/errors";
import {
  type ClusterRelease,
  CreateClusterReleaseRequestSchema,
  CreateMachineImageRequestSchema,
  CreateNodePoolReleaseRequestSchema,
  type List,
  type MachineImage,
  type NodePoolRelease,
  type NvkeClient,
} from "@nodekit/nvke-api";
import { readRequestFile } from "./requests.ts";

/** The three release objects a site publishes before its first tenant cluster (NV-14). */
export type ReleaseKind = "machineimage" | "clusterrelease" | "nodepoolrelease";
export interface ReleaseObjects {
  machineimage: MachineImage;
  clusterrelease: ClusterRelease;
  nodepoolrelease: NodePoolRelease;
}

const REQUEST = {
  machineimage: { schema: CreateMachineImageRequestSchema, what: "CreateMachineImageRequest", label: "MachineImage" },
  clusterrelease: {
    schema: CreateClusterReleaseRequestSchema,
    what: "CreateClusterReleaseRequest",
    label: "ClusterRelease",
  },
  nodepoolrelease: {
    schema: CreateNodePoolReleaseRequestSchema,
    what: "CreateNodePoolReleaseRequest",
    label: "NodePoolRelease",
  },
} as const;

/** Validates the request in `file` (one document) and publishes the object. */
export async function createRelease<K extends ReleaseKind>(options: {
  client: NvkeClient;
  kind: K;
  file: string;
}): Promise<ReleaseObjects[K]> {
  const { client, file } = options;
  switch (options.kind) {
    case "machineimage":
      return (await client.createMachineImage(
        await readRequestFile(REQUEST.machineimage.schema, file, REQUEST.machineimage.what),
      )) as ReleaseObjects[K];
    case "clusterrelease":
      return (await client.createClusterRelease(
        await readRequestFile(REQUEST.clusterrelease.schema, file, REQUEST.clusterrelease.what),
      )) as ReleaseObjects[K];
    default:
      return (await client.createNodePoolRelease(
        await readRequestFile(REQUEST.nodepoolrelease.schema, file, REQUEST.nodepoolrelease.what),
      )) as ReleaseObjects[K];
  }
}

/** Every object of a kind (optionally only the one named), a page at a time. Returns how many. */
export async function listReleases<K extends ReleaseKind>(options: {
  client: NvkeClient;
  kind: K;
  name?: string | undefined;
  onPage: (items: ReleaseObjects[K][]) => Promise<void> | void;
}): Promise<number> {
  const fetchPage = (next: string | undefined): Promise<List<ReleaseObjects[K]>> => {
    const page = next === undefined ? {} : { continue: next };
    switch (options.kind) {
      case "machineimage":
        return options.client.listMachineImagesPage(page) as Promise<List<ReleaseObjects[K]>>;
      case "clusterrelease":
        return options.client.listClusterReleasesPage(page) as Promise<List<ReleaseObjects[K]>>;
      default:
        return options.client.listNodePoolReleasesPage(page) as Promise<List<ReleaseObjects[K]>>;
    }
  };
  let count = 0;
  let next: string | undefined;
  do {
    const page = await fetchPage(next);
    const items = options.name === undefined ? page.items : page.items.filter((item) => item.name === options.name);
    count += items.length;
    if (items.length > 0) await options.onPage(items);
    next = page.continue;
  } while (next !== undefined && next !== "");
  if (options.name !== undefined && count === 0) {
    const label = REQUEST[options.kind].label;
    throw new UserError(`${label.toUpperCase()}_NOT_FOUND`, `${label} ${JSON.stringify(options.name)} not found`, {
      exitCode: ExitCode.NotFound,
      next: `list them with: nvkectl get ${options.kind}s`,
    });
  }
  return count;
}
