import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type DeployPath, providerKey, readDeployPath } from "@nodekit/deploy-path";
import { UserError } from "@nodekit/errors";
import { assertTrustedDir } from "@nodekit/fs-safe";
import type { Redactor } from "@nodekit/process";
import { readSiteSpec } from "@nodekit/sitespec";
import { readStackConfig, type StackConfig, stackCredentials } from "@nodekit/stack-config";
import { errorCodes } from "../../errors.ts";
import { helmRegistryLogin } from "../install-registry-login.ts";
import { pinDeployPath, readReleaseFile } from "../install-release.ts";
import { providersOf } from "./cluster-api.ts";
import {
  CONTROLLER_NAME_LABEL,
  type InstallContext,
  type InstallInputs,
  OWN_ITEMS,
  type ReleaseContext,
  WORK_DIR,
} from "./context.ts";

/** The documents, checked before the cluster is asked anything: every problem of each file at once. */
export async function readDocuments(inputs: InstallInputs) {
  const cwd = inputs.cwd ?? process.cwd();
  const env = inputs.env ?? process.env;
  const site = await readSiteSpec(inputs.siteSpec, { cwd });
  const stack = await readStackConfig(resolve(cwd, inputs.stackConfig), { source: inputs.stackConfig });
  const deployPath = await readDeployPath(inputs.deployPath, { cwd });
  if (deployPath.clusterAPI === undefined) {
    throw new UserError(
      errorCodes.INSTALL_DEPLOY_PATH_UNUSABLE,
      `deploy path ${inputs.deployPath} pins no Cluster API`,
      {
        why: "the install runs clusterctl init at the versions the deploy path pins in spec.clusterAPI",
        next: "add spec.clusterAPI (version, certManager, infrastructure) to its nvke-deploy.yaml; docs/deploy-path.md shows it",
      },
    );
  }
  const clash = deployPath.items.find((item) => (OWN_ITEMS as readonly string[]).includes(item.name));
  if (clash !== undefined) {
    throw new UserError(
      errorCodes.INSTALL_DEPLOY_PATH_UNUSABLE,
      `deploy path item ${JSON.stringify(clash.name)} uses a name the install keeps for its own step`,
      { why: `the install's own steps are ${OWN_ITEMS.join(", ")}`, next: "rename the item in nvke-deploy.yaml" },
    );
  }
  checkControllerApi(stack, deployPath, inputs);
  const { nicoApiKey } = stackCredentials(stack, env);
  inputs.redactor.add(nicoApiKey, "NVKE_NICO_API_KEY");
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  const workDir = resolve(cwd, inputs.workDir ?? join(stateHome, "nvkectl", "install", site.metadata.name));
  await checkWorkDir(workDir, inputs.workDir);
  const stackDir = dirname(resolve(cwd, inputs.stackConfig));
  if (inputs.release === undefined) return { site, stack, stackDir, deployPath, workDir, nicoApiKey };
  const release = await readRelease(inputs.release, { cwd, env, deployPath, workDir, redactor: inputs.redactor });
  return { site, stack, stackDir, deployPath: release.deployPath, workDir, nicoApiKey, release };
}

/**
 * The stack config's controllerApi against the deploy path: the NetworkPolicy goes to the
 * namespace of the item that takes the stack's values (the controller chart), and selects
 * pods by labels the chart gives them (the install passes the port and the labels to it).
 */
function checkControllerApi(stack: StackConfig, deployPath: DeployPath, inputs: InstallInputs): void {
  const { podSelector } = stack.controllerApi;
  const namespace = controllerNamespace({ stack, deployPath });
  const controller = deployPath.items.find((item) => item.stackValues);
  const problems: string[] = [];
  if (controller?.namespace !== undefined && controller.namespace !== namespace) {
    problems.push(
      `controllerApi.namespace is ${namespace}, but the deploy path installs the controller (item ${controller.name}) in ${controller.namespace}`,
    );
  }
  const name = podSelector[CONTROLLER_NAME_LABEL.key];
  if (name !== undefined && name !== CONTROLLER_NAME_LABEL.value) {
    problems.push(
      `controllerApi.podSelector sets ${CONTROLLER_NAME_LABEL.key}=${name}, but the controller chart labels its pods ${CONTROLLER_NAME_LABEL.key}=${CONTROLLER_NAME_LABEL.value}`,
    );
  }
  if (problems.length === 0) return;
  throw new UserError(
    errorCodes.INSTALL_CONTROLLER_API_MISMATCH,
    `stack config ${inputs.stackConfig} and deploy path ${inputs.deployPath} disagree about the controller API; nothing was changed:\n  ${problems.join("\n  ")}`,
    {
      why: "the client-networks NetworkPolicy must select the controller's pods, in their namespace, on their port",
      next:
        controller?.namespace !== undefined && controller.namespace !== namespace
          ? `set controllerApi.namespace to ${controller.namespace} (or leave it out)`
          : `leave out controllerApi.podSelector's ${CONTROLLER_NAME_LABEL.key}`,
      facts: { stackConfig: inputs.stackConfig },
    },
  );
}

/** The controller's namespace: the stack config's controllerApi.namespace, else the controller item's, else nke-controller. */
export function controllerNamespace(context: Pick<InstallContext, "stack" | "deployPath">): string {
  return (
    context.stack.controllerApi.namespace ??
    context.deployPath.items.find((item) => item.stackValues)?.namespace ??
    "nke-controller"
  );
}

/**
 * The work directory, checked with the other inputs (in the dry run too, creating nothing):
 * what the install writes there is applied with the site's admin kubeconfig, and helm and
 * clusterctl keep their HOME there (plugins, repositories), so one that is not a directory,
 * or that another user owns or may write to (it or a directory above it), is refused
 * before anything runs (INSTALL_WORK_DIR_UNUSABLE, DIR_UNSAFE). A missing one is created
 * 0700 by the first step that writes there, and checked again then.
 */
async function checkWorkDir(workDir: string, given: string | undefined): Promise<void> {
  const unusable = (why: string) =>
    new UserError(errorCodes.INSTALL_WORK_DIR_UNUSABLE, `${WORK_DIR} ${workDir} cannot be used`, {
      why,
      next:
        given === undefined
          ? `remove ${workDir}, or name another directory with --work-dir`
          : "name a directory with --work-dir",
      facts: { path: workDir },
    });
  const isDirectory = await stat(workDir).then(
    (info) => info.isDirectory(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw unusable(`it cannot be read (${error.code ?? String(error)})`);
    },
  );
  if (isDirectory === false) {
    throw unusable(
      "it is not a directory: the install writes the files it renders there, and helm and clusterctl keep their HOME in it",
    );
  }
  await assertTrustedDir(workDir, { own: true, what: WORK_DIR });
}

/** The release file, checked against the deploy path: every chart and provider it installs must be in it. */
async function readRelease(
  file: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; deployPath: DeployPath; workDir: string; redactor: Redactor },
): Promise<ReleaseContext> {
  const lib = await import("@nodekit/release");
  const description = await readReleaseFile(file, options.cwd, lib);
  const providers = new Map(description.providers.map((p) => [providerKey(p), p]));
  const missing = providersOf(options.deployPath).filter((p) => !providers.has(providerKey(p)));
  if (missing.length > 0) {
    throw new UserError(
      errorCodes.RELEASE_INCOMPLETE_FOR_INSTALL,
      `release ${file} lacks ${missing.length} Cluster API provider${missing.length === 1 ? "" : "s"} deploy path ${options.deployPath.name} installs; nothing was changed`,
      {
        problems: missing.map((p) => ({
          severity: "error" as const,
          source: file,
          path: ["providers"],
          message: `has no ${p.type} ${JSON.stringify(p.name)}`,
        })),
        next: "use the release built for this deploy path, or install without --release",
      },
    );
  }
  const pinning = await pinDeployPath(options.deployPath, description, { source: file, workDir: options.workDir, lib });
  const { credentialFilePaths, parseReference } = await import("@nodekit/oci");
  // The credential release verify would use wins: the environment's, when it has one for a chart's registry.
  const chartHosts = pinning.deployPath.items.flatMap((item) =>
    item.kind === "chart" && item.pin.repository?.startsWith("oci://")
      ? [parseReference(`${item.pin.repository}/${item.pin.chart}`).registry]
      : [],
  );
  const login = await helmRegistryLogin(chartHosts, options);
  if (login !== undefined) return { ...pinning, providers, helmRegistryLogin: login };
  const [dockerConfig, helmConfig] = credentialFilePaths({
    env: options.env,
    ...(options.env.HOME ? { homedir: options.env.HOME } : {}),
  });
  let helmRegistryConfig: string | undefined;
  for (const candidate of [helmConfig, dockerConfig]) {
    if (
      candidate !== undefined &&
      (await stat(candidate).then(
        (info) => info.isFile(),
        () => false,
      ))
    ) {
      helmRegistryConfig = candidate;
      break;
    }
  }
  return { ...pinning, providers, ...(helmRegistryConfig === undefined ? {} : { helmRegistryConfig }) };
}

/** What readDocuments returns: the documents, checked, before the cluster is asked anything. */
export type InstallDocuments = Awaited<ReturnType<typeof readDocuments>>;
