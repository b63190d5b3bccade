export { excerpt } from "@nodekit/http";
export {
  createNodeRingsClient,
  type NodeRingsClient,
  type NodeRingsClientOptions,
  type RetryPolicy,
  type WaitOptions,
} from "./client.ts";
export {
  DEFAULT_DOWNLOAD_CEILING_BYTES,
  type Downloaded,
  type DownloadOptions,
  type DownloadSpec,
  downloadArtifact,
} from "./download.ts";
export { errorCodes as nodeRingsErrorCodes } from "./errors.ts";
export { renderPeeringKubeconfig } from "./kubeconfig.ts";
export { API_VERSION, buildOpenApiDocument } from "./openapi.ts";
export * from "./schemas.ts";
