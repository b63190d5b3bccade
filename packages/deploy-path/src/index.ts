export {
  ARGOCD_APP_OF_APPS,
  ARGOCD_ARTIFACT_MEDIA_TYPES,
  type ArgoCdTreeOptions,
  argoCdApplicationFiles,
  argoCdApplications,
  argoCdAppOfApps,
  argoCdArtifactFiles,
} from "./argocd.ts";
export {
  type ClusterApiProvider,
  type ClusterApiProviderType,
  type ClusterApiRepository,
  clusterApiProviders,
  clusterApiRepositoryFiles,
  clusterctlConfig,
  clusterctlVersion,
  compareInstalledProviders,
  type InstalledProviders,
  type PlanClusterApiOptions,
  type PlannedClusterApi,
  planClusterApi,
  providerKey,
} from "./cluster-api.ts";
export { errorCodes as deployPathErrorCodes } from "./errors.ts";
export {
  clusterScopedKinds,
  FLUX_CONFIG_MEDIA_TYPE,
  FLUX_CONTENT_MEDIA_TYPE,
  FLUX_KUSTOMIZE_API_VERSION,
  FLUX_MANIFESTS_FILE,
  FLUX_SOURCE_API_VERSION,
  type FluxArtifactRef,
  type FluxItem,
  type FluxPatch,
  type FluxTreeOptions,
  fluxManifests,
  fluxObjects,
  inNamespace,
  type RenderedObject,
  secretsIn,
} from "./flux.ts";
export {
  type FluxArtifact,
  type OciBlob,
  ociLayoutFiles,
  type PackFluxArtifactOptions,
  packFluxArtifact,
} from "./flux-artifact.ts";
export {
  type ArtifactPusher,
  COSIGN_SIGNATURE_ANNOTATION,
  COSIGN_SIMPLE_SIGNING_MEDIA_TYPE,
  type CosignSignature,
  cosignSignature,
  cosignSignatureTag,
  type PushedFluxArtifact,
  type PushFluxArtifactsOptions,
  publicKeyOf,
  pushFluxArtifacts,
} from "./flux-push.ts";
export {
  type ChartItem,
  type DeployPath,
  type DeployPathFs,
  type DeployPathItem,
  type LoadDeployPathOptions,
  type LoadedDeployPath,
  loadDeployPath,
  type ManifestObject,
  type ManifestsItem,
  nodeFs,
} from "./load.ts";
export { DEFAULT_FIELD_MANAGER, type PlanDeployPathOptions, planDeployPath, planDeployPathItems } from "./plan.ts";
export { readDeployPath } from "./read.ts";
export {
  CHART_PIN_FILE,
  type ChartPin,
  ChartPinSchema,
  type ClusterApiPins,
  DEPLOY_PATH_API_VERSION,
  DEPLOY_PATH_FILE,
  DEPLOY_PATH_KIND,
  type DeployPathFile,
  DeployPathFileSchema,
  OVERLAY_FILE,
  VALUES_FILE,
} from "./schema.ts";
