export { type BinariesOptions, type BinarySet, binaries, ensureScript } from "./binaries.ts";
export {
  type ApiResponse,
  type ControlPlaneClient,
  type ControlPlaneInfo,
  connectControlPlane,
  namespaceName,
} from "./client.ts";
export {
  type ControlPlane,
  type StartControlPlaneOptions,
  type StartupTimings,
  startControlPlane,
} from "./control-plane.ts";
export { TestenvError } from "./errors.ts";
export { kubeconfigFileName, renderKubeconfig } from "./kubeconfig.ts";
export type { ClientIdentity } from "./pki.ts";
export { freePort, onFreePorts, portTakenLine } from "./ports.ts";
