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
export { applyMergePatch, isPlainObject } from "./merge-patch.ts";
export { API_VERSION, buildOpenApiDocument } from "./openapi.ts";
export * from "./schemas.ts";
export { type ParsedRequest, type ParseRequestOptions, parseRequest, problemsToDetails } from "./validate.ts";
