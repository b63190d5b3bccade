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
  type Requirement,
} from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";
import { forEachPage } from "./paging.ts";
import { readRequestFile } from "./requests.ts";
import { quotedList, selected } from "./select.ts";

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

/**
 * Every object of a kind (only those named, when names are given; only those whose labels
 * match `selector`, when one is), a page at a time. Returns how many were found, and the
 * names that name none — see {@link releasesNotFound}.
 */
export async function listReleases<K extends ReleaseKind>(options: {
  client: NvkeClient;
  kind: K;
  names?: readonly string[] | undefined;
  selector?: readonly Requirement[] | undefined;
  onPage: (items: ReleaseObjects[K][]) => Promise<void> | void;
}): Promise<{ count: number; missing: string[] }> {
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
  const wanted = options.names === undefined || options.names.length === 0 ? undefined : new Set(options.names);
  const seen = new Set<string>();
  const count = await forEachPage(async (page) => {
    const list = await fetchPage(page);
    const named = wanted === undefined ? list.items : list.items.filter((item) => wanted.has(item.name));
    const items = selected(named, options.selector);
    for (const item of items) seen.add(item.name);
    return { ...list, items };
  }, options.onPage);
  return { count, missing: wanted === undefined ? [] : [...wanted].filter((name) => !seen.has(name)) };
}

/** The kind's NOT_FOUND error (NotFound) for each of these names, in one error. */
export function releasesNotFound(kind: ReleaseKind, missing: readonly string[]): UserError {
  const { label, notFound } = KINDS[kind];
  return new UserError(notFound, `${label}${missing.length === 1 ? "" : "s"} ${quotedList(missing)} not found`, {
    next: `list them with: nvkectl get ${kind}s`,
  });
}
