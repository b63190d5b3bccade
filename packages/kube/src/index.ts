// Importing this module does not load @kubernetes/client-node: `connect` imports it when it is called.
export { classifyApiError, classifyToolStderr, type KubeFailure, type KubeFailureKind } from "./classify.ts";
export { type ConnectOptions, connect, type KubeClient, type KubeconfigSource, whereOf } from "./client.ts";
export { type KubeWhere, kubectlFor, kubeError } from "./error.ts";
export { errorCodes as kubeErrorCodes } from "./errors.ts";
export { assertKubeconfig } from "./kubeconfig.ts";
export {
  clusterctlCall,
  DEFAULT_REQUEST_TIMEOUT,
  helmCall,
  isolatedToolEnv,
  type KubeAnswer,
  type KubeTarget,
  kubectlCall,
  kubeToolError,
  runKube,
  runKubeStrict,
  toolMissing,
} from "./tools.ts";
export { atLeast, KUBE_TOOLS, probeTool, requireTool, type ToolProbe, type ToolSpec, toolProblem } from "./versions.ts";
