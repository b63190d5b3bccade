/**
 * Every error-code table of the project, in one list: what docs/errors.md is generated from
 * and what the catalogue test checks. A package or CLI that defines a table adds it here.
 */

import { cliKitErrorCodes } from "@nodekit/cli-kit";
import { deployPathErrorCodes } from "@nodekit/deploy-path";
import { documentsErrorCodes } from "@nodekit/documents";
import { catalogue, type ErrorCode, errorCodes } from "@nodekit/errors";
import { fsSafeErrorCodes } from "@nodekit/fs-safe";
import { httpErrorCodes } from "@nodekit/http";
import { k8sAuthErrorCodes } from "@nodekit/k8s-auth";
import { kubeErrorCodes } from "@nodekit/kube";
import { nodeRingsErrorCodes } from "@nodekit/noderings-api";
import { errorCodes as nrErrorCodes } from "@nodekit/nr/errors";
import { nvkeApiErrorCodes } from "@nodekit/nvke-api";
import { errorCodes as nvkectlErrorCodes } from "@nodekit/nvkectl/errors";
import { ociErrorCodes } from "@nodekit/oci";
import { phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import { planErrorCodes } from "@nodekit/plan";
import { processErrorCodes } from "@nodekit/process";
import { releaseErrorCodes } from "@nodekit/release";
import { siteConfigErrorCodes } from "@nodekit/site-config";
import { siteSpecErrorCodes } from "@nodekit/sitespec";
import { stackConfigErrorCodes } from "@nodekit/stack-config";
import { versionPinsErrorCodes } from "@nodekit/version-pins";

const ERROR_TABLES: ReadonlyArray<Record<string, ErrorCode>> = [
  errorCodes,
  processErrorCodes,
  planErrorCodes,
  cliKitErrorCodes,
  fsSafeErrorCodes,
  documentsErrorCodes,
  kubeErrorCodes,
  httpErrorCodes,
  k8sAuthErrorCodes,
  nvkeApiErrorCodes,
  siteConfigErrorCodes,
  siteSpecErrorCodes,
  ociErrorCodes,
  releaseErrorCodes,
  deployPathErrorCodes,
  stackConfigErrorCodes,
  phaseRunnerErrorCodes,
  nvkectlErrorCodes,
  nrErrorCodes,
  nodeRingsErrorCodes,
  versionPinsErrorCodes,
];

/** Every code, sorted; throws when two tables define the same code. */
export function allErrorCodes(): ErrorCode[] {
  return catalogue(ERROR_TABLES);
}
