import type { UserError } from "@nodekit/errors";
import type { fsSafeErrorCodes } from "@nodekit/fs-safe";
import type { kubeErrorCodes } from "@nodekit/kube";
import type { nvkeApiErrorCodes } from "@nodekit/nvke-api";
import type { ociErrorCodes } from "@nodekit/oci";
import type { releaseErrorCodes } from "@nodekit/release";
import type { siteConfigErrorCodes } from "@nodekit/site-config";
import type { siteSpecErrorCodes } from "@nodekit/sitespec";
import type { errorCodes } from "./errors.ts";

/**
 * A code of the error tables nvkectl's failures come from: a hint under a code no table has
 * (a renamed or removed one) fails the typecheck. Types only: the tables are not loaded for it.
 */
type NvkectlErrorCode =
  | keyof typeof errorCodes
  | keyof typeof kubeErrorCodes
  | keyof typeof siteConfigErrorCodes
  | keyof typeof siteSpecErrorCodes
  | keyof typeof nvkeApiErrorCodes
  | keyof typeof releaseErrorCodes
  | keyof typeof ociErrorCodes
  | keyof typeof fsSafeErrorCodes;

/** nvkectl's hint table: its own next steps, by the code they follow. */
export type NvkectlHints = Partial<Record<NvkectlErrorCode, (error: UserError) => readonly string[]>>;

const SET_SITE = "nvkectl config set-site NAME --url URL --kubeconfig FILE";
const REGISTRY_LOGIN =
  "set NODEKIT_REGISTRY_USERNAME and NODEKIT_REGISTRY_PASSWORD, or log in with helm registry login or docker login (never pass a password as a flag)";
const REGISTRY_REACH = "for a lab registry without TLS add --plain-http; for one with a private CA, --ca-file FILE";
const CHECK_URL = "check the site's controller URL with `nvkectl config get-sites`";

/**
 * nvkectl's own next steps, per error code, after the library's (which never name nvkectl):
 * what to run in this CLI to fix it.
 */
export const NVKECTL_HINTS = {
  SITE_SPEC_UNREADABLE: () => [
    "name the site spec with --sitespec; nvkectl sitespec generate writes one from the hosts CSV",
  ],
  KUBECONFIG_NOT_FOUND: () => [
    `pass the site cluster's kubeconfig with --kubeconfig (site bootstrap leaves it as <site>.kubeconfig): ${SET_SITE}`,
  ],
  KUBECONFIG_INVALID: () => [`or point the site at another kubeconfig: ${SET_SITE}`],
  KUBE_UNAUTHORIZED: () => [`point the site at the fresh kubeconfig: ${SET_SITE}`],
  NO_ACTIVE_SITE: (error) =>
    error.facts.configured === 0
      ? [`add one with ${SET_SITE} (the first site becomes active)`]
      : ["choose one with nvkectl config use-site NAME", "or name one for a single command with --site NAME"],
  SITE_NOT_FOUND: (error) => [
    ...(error.facts.configured === 0 ? [] : ["list them with nvkectl config get-sites"]),
    `add it with nvkectl config set-site ${String(error.facts.site ?? "NAME")} --url URL --kubeconfig FILE`,
  ],
  CONTROLLER_UNREACHABLE: () => [CHECK_URL],
  CONTROLLER_TIMEOUT: (error) => [
    CHECK_URL,
    `give each request more time with --request-timeout (now ${Math.round(Number(error.facts.timeoutMs ?? 30_000) / 1000)}s), e.g. --request-timeout 2m`,
  ],
  CONTROLLER_REDIRECTED: () => [CHECK_URL],
  CONTROLLER_RESPONSE_TOO_LARGE: (error) => [
    `raise the limit with NVKECTL_MAX_RESPONSE_MB=<MiB> (now ${Math.round(Number(error.facts.limitBytes ?? 0) / 1048576)})`,
  ],
  CONTROLLER_TLS_UNTRUSTED: () => [
    "name the certificate authority with --certificate-authority FILE (PEM), or add it to the system trust store",
  ],
  CONTROLLER_BAD_RESPONSE: () => [CHECK_URL],
  RELEASE_REGISTRY_AUTH_REFUSED: () => [REGISTRY_LOGIN],
  KUBE_REGISTRY_UNAUTHORIZED: () => [REGISTRY_LOGIN],
  OCI_AUTH_REFUSED: () => [REGISTRY_LOGIN],
  RELEASE_REGISTRY_UNREACHABLE: () => [REGISTRY_REACH],
  OCI_UNREACHABLE: () => [REGISTRY_REACH],
  OCI_TOKEN_REALM_REFUSED: (error) => [
    `if ${String(error.facts.realm ?? "that host")} is this registry's token service, allow it with --allow-token-realm ${String(error.facts.realm ?? "HOST").replace(/^\w+:\/\//, "")}`,
  ],
  RELEASE_INCOMPLETE_FOR_INSTALL: () => [
    "export the release built for this deploy path: nvkectl release verify REF --policy FILE, then nvkectl release export",
  ],
  RELEASE_IMAGE_NOT_PINNED: () => [
    "export the release built for this deploy path: nvkectl release verify REF --policy FILE, then nvkectl release export",
  ],
  FILE_OWNED_BY_OTHER: (error) =>
    error.facts.forceFlag === undefined
      ? []
      : [`or pass ${String(error.facts.forceFlag)} to replace it with a file of your own`],
  CLUSTER_NOT_FOUND: () => ["list the clusters with `nvkectl get clusters`"],
  NODEPOOL_NOT_FOUND: (error) => [
    `list the cluster's node pools with: nvkectl get nodepools --cluster ${String(error.facts.cluster ?? "<cluster>")}`,
  ],
} satisfies NvkectlHints;
