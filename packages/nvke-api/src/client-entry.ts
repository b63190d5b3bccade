// `@nodekit/nvke-api/client`: the client, the fast checks and the plain
// values of the contract, without the zod schemas (which the client loads only when it
// needs them). A short-lived CLI imports this; everything is also in the package index.
export {
  type Check,
  isCluster,
  isClusterRelease,
  isMachineImage,
  isNodePool,
  isNodePoolRelease,
  listOf,
} from "./checks.ts";
export {
  createNvkeClient,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  type ListNodePoolsOptions,
  type MergePatch,
  type NvkeClient,
  type NvkeClientOptions,
  type PageOptions,
} from "./client.ts";
export * from "./constants.ts";
export { errorCodes as nvkeApiErrorCodes } from "./errors.ts";
export {
  labelKeyFault,
  labelValueFault,
  matchesSelector,
  parseSelector,
  type Requirement,
  type SelectorResult,
} from "./labels.ts";
export type {
  ApiErrorBody,
  Cluster,
  ClusterPatch,
  ClusterRelease,
  CreateClusterReleaseRequest,
  CreateClusterRequest,
  CreateMachineImageRequest,
  CreateNodePoolReleaseRequest,
  CreateNodePoolRequest,
  List,
  MachineImage,
  NodePool,
  NodePoolPatch,
  NodePoolRelease,
} from "./schemas.ts";
