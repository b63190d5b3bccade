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
  excerpt,
  type ListNodePoolsOptions,
  type MergePatch,
  type NvkeClient,
  type NvkeClientOptions,
  type PageOptions,
  retryAfterMs,
} from "./client.ts";
export { errorCodes as nvkeApiErrorCodes } from "./errors.ts";
export { applyMergePatch, isPlainObject } from "./merge-patch.ts";
export { API_VERSION, buildOpenApiDocument } from "./openapi.ts";
export * from "./schemas.ts";
export {
  createFetchTransport,
  type HttpTransport,
  TransportError,
  type TransportFailure,
  type TransportRequest,
  type TransportResponse,
} from "./transport.ts";
export { createNodeHttpTransport, type NodeHttpTransportOptions } from "./transport-node.ts";
export { type ParsedRequest, type ParseRequestOptions, parseRequest, problemsToDetails } from "./validate.ts";
