// Importing this module does not load @kubernetes/client-node: `connect` imports it when it is called.

// The call builders, the kubeconfig check and the error table live in @nodekit/kube-calls (no
// client library), for libraries that only build calls; re-exported here unchanged.
export {
  assertKubeconfig,
  clusterctlCall,
  crdEstablishedWaitArgs,
  DEFAULT_REQUEST_TIMEOUT,
  defaultKubeconfig,
  helmCall,
  isolatedToolEnv,
  type KubeconfigOrigin,
  type KubeTarget,
  kubeconfigFiles,
  kubectlCall,
  kubeErrorCodes,
  kubeTarget,
} from "@nodekit/kube-calls";
export { type KeepConnectionsOptions, keepConnections } from "@nodekit/kube-connections";
export { classifyApiError, classifyToolStderr, type KubeFailure, type KubeFailureKind } from "./classify.ts";
export {
  type ConnectOptions,
  connect,
  type KubeClient,
  type KubeconfigSource,
  type LoadedKubeconfig,
  loadKubeconfig,
  whereOf,
} from "./client.ts";
export { type KubeWhere, kubectlFor, kubeError } from "./error.ts";
export {
  type KubeAnswer,
  kubeToolError,
  runKube,
  runKubeStrict,
  toolMissing,
} from "./tools.ts";
export { atLeast, KUBE_TOOLS, probeTool, requireTool, type ToolProbe, type ToolSpec, toolProblem } from "./versions.ts";
