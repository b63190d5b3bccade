// @nodekit/kube/access: the package's surface without the version probes (probeTool,
// requireTool, … and the semver they load). A CLI's hot path (a read with a cached token)
// imports this entry, so a bundler keeps semver out of the chunk it loads. Like the index,
// importing it does not load @kubernetes/client-node.
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
