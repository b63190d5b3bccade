export {
  clusterctlCall,
  DEFAULT_REQUEST_TIMEOUT,
  helmCall,
  isolatedToolEnv,
  type KubeTarget,
  kubeconfigFiles,
  kubectlCall,
  kubeTarget,
} from "./calls.ts";
export { errorCodes as kubeErrorCodes } from "./errors.ts";
export { assertKubeconfig, defaultKubeconfig, type KubeconfigOrigin } from "./kubeconfig.ts";
export { crdEstablishedWaitArgs } from "./wait.ts";
