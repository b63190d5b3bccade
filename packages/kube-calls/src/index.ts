export {
  clusterctlCall,
  DEFAULT_REQUEST_TIMEOUT,
  helmCall,
  isolatedToolEnv,
  type KubeTarget,
  kubectlCall,
} from "./calls.ts";
export { errorCodes as kubeErrorCodes } from "./errors.ts";
export { assertKubeconfig } from "./kubeconfig.ts";
