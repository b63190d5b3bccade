import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How getting a bearer token for the NVKE controller can fail (besides reaching the cluster: see @nodekit/kube). */
export const errorCodes = defineErrorCodes("k8s-auth", {
  AUTH_CONFIG_FORBIDDEN: {
    exitCode: ExitCode.Unauthorized,
    meaning:
      "The kubeconfig's identity may not read any of the NVKE auth ConfigMaps that exist; no request was sent to the controller.",
  },
  AUTH_CONFIG_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The first readable NVKE auth ConfigMap has no audience value.",
  },
  AUTH_TOKEN_EXPIRATION_INVALID: {
    exitCode: ExitCode.Usage,
    meaning: "The token lifetime asked for is under 600 seconds or not a whole number.",
  },
  AUTH_TOKEN_FORBIDDEN: {
    exitCode: ExitCode.Unauthorized,
    meaning:
      "The kubeconfig's identity may not create serviceaccounts/token for the controller's client ServiceAccount.",
  },
  AUTH_SERVICE_ACCOUNT_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The controller's client ServiceAccount (nke-clients/nke-client) does not exist on the site cluster.",
  },
  AUTH_TOKEN_RESPONSE_INVALID: {
    exitCode: ExitCode.Rejected,
    meaning: "The API server answered the TokenRequest without a token or without a valid expiry.",
  },
});
