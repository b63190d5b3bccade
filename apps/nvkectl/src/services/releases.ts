import { UserError } from "@nodekit/errors";
import {
  type ClusterRelease,
  CreateClusterReleaseRequestSchema,
  CreateMachineImageRequestSchema,
  CreateNodePoolReleaseRequestSchema,
  type List,
  type MachineImage,
  type NodePoolRelease,
  type NvkeClient,
  type PageOptions,
} from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";
import { forEachPage } from "./paging.ts";
import { readRequestFile } from "./requests.ts";

/** The three release objects a site publishes before its first tenant cluster (NV-14). */
export type ReleaseKind = "machineimage" | "clusterrelease" | "nodepoolrelease";
export interface ReleaseObjects {
  machineimage: MachineImage;
  clusterrelease: ClusterRelease;
  nodepoolrelease: NodePoolRelease;
}

/** Each release kind: its request schema, what the request is called, its label, its not-found code. */
const KINDS = {
  machineimage: {
    schema: CreateMachineImageRequestSchema,
    what: "CreateMachineImageRequest",
    label: "MachineImage",
    notFound: errorCodes.MACHINEIMAGE_NOT_FOUND,
  },
  clusterrelease: {
    schema: CreateClusterReleaseRequestSchema,
    what: "CreateClusterReleaseRequest",
    label: "ClusterRelease",
    notFound: errorCodes.CLUSTERRELEASE_NOT_FOUND,
  },
  nodepoolrelease: {
    schema: CreateNodePoolReleaseRequestSchema,
    what: "CreateNodePoolReleaseRequest",
    label: "NodePoolRelease",
    notFound: errorCodes.NODEPOOLRELEASE_NOT_FOUND,
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
        await readRequestFile(KINDS.machineimage.schema, file, KINDS.machineimage.what),
      )) as ReleaseObjects[K];
    case "clusterrelease":
      return (await client.createClusterRelease(
        await readRequestFile(KINDS.clusterrelease.schema, file, KINDS.clusterrelease.what),
      )) as ReleaseObjects[K];
    default:
      return (await client.createNodePoolRelease(
        await readRequestFile(KINDS.nodepoolrelease.schema, file, KINDS.nodepoolrelease.what),
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
  const fetchPage = (page: Pick<PageOptions, "continue">): Promise<List<ReleaseObjects[K]>> => {
    switch (options.kind) {
      case "machineimage":
        return options.client.listMachineImagesPage(page) as Promise<List<ReleaseObjects[K]>>;
      case "clusterrelease":
        return options.client.listClusterReleasesPage(page) as Promise<List<ReleaseObjects[K]>>;
      default:
        return options.client.listNodePoolReleasesPage(page) as Promise<List<ReleaseObjects[K]>>;
    }
  };
  const count = await forEachPage(async (page) => {
    const list = await fetchPage(page);
    if (options.name === undefined) return list;
    return { ...list, items: list.items.filter((item) => item.name === options.name) };
  }, options.onPage);
  if (options.name !== undefined && count === 0) {
    const { label, notFound } = KINDS[options.kind];
    throw new UserError(notFound, `${label} ${JSON.stringify(options.name)} not found`, {
      next: `list them with: nvkectl get ${options.kind}s`,
    });
  }
  return count;
}
