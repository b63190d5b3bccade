import { join } from "node:path";
import { planDeployPathItems } from "@nodekit/deploy-path";
import { isolatedToolEnv, kubectlCall } from "@nodekit/kube";
import { action, createPlan, exec, type Plan, type PlanItem } from "@nodekit/plan";
import { formatCall } from "@nodekit/process";
import { dump } from "js-yaml";
import { pruneItem } from "../install-prune.ts";
import type { HelmRegistryLogin } from "../install-registry-login.ts";
import type { PinnedValuesFile } from "../install-release.ts";
import { clusterApiItem, providersOf } from "./cluster-api.ts";
import {
  FIELD_MANAGER,
  type InstallContext,
  NICO_CREDENTIALS_SECRET,
  NICO_IDENTITY_NAME,
  type ReleaseContext,
} from "./context.ts";
import { controllerNamespace } from "./documents.ts";
import { inventoryOf, nicoProviderCredentials, renderOwnObjects } from "./objects.ts";
import { NODES_ARGS } from "./observe.ts";
import { applyFile, manifest, spirePatch, writeStep } from "./steps.ts";
import { stackValues, stackValuesSummary } from "./values.ts";

/**
 * The install as a plan, from what was read and observed (pure): clusterctl init, the lab
 * StorageClass, the NICo credentials Secret, the deploy path item by item (images chosen
 * for the nodes' architecture), the SPIRE patch of the Cluster API controllers, and the
 * NetworkPolicy for the client networks. The dry run prints it; a real run executes it.
 */
export function planInstall(context: InstallContext): Plan {
  const { target, workDir, stack, observations } = context;
  const toolEnv = isolatedToolEnv(join(workDir, "home"));
  const storageClassFile = join(workDir, "storage-class.yaml");
  const own = renderOwnObjects(context);
  const { storageClass, policy } = own;
  const namespace = controllerNamespace(context);
  const nico = nicoProviderCredentials(context.deployPath);
  const credentials = manifest(...own.credentials);
  const valuesFile = join(workDir, "stack-values.yaml");
  const takesValues = context.deployPath.items.filter((item) => item.stackValues).map((item) => item.name);
  const values = takesValues.length === 0 ? undefined : dump(stackValues(context), { lineWidth: -1 });
  const release = context.release;
  const registryConfig = release?.helmRegistryLogin?.path ?? release?.helmRegistryConfig;
  const helmEnv = registryConfig === undefined ? toolEnv : { ...toolEnv, HELM_REGISTRY_CONFIG: registryConfig };
  const deployItems = planDeployPathItems(context.deployPath, {
    target,
    helmEnv,
    fieldManager: FIELD_MANAGER,
    extraValues: Object.fromEntries(takesValues.map((name) => [name, [valuesFile]])),
  })
    .map((item) =>
      // The rendered values are written by each item that reads them, so --from-item finds them too.
      values !== undefined && takesValues.includes(item.id)
        ? {
            ...item,
            steps: [writeStep(valuesFile, values, stackValuesSummary(context)), ...item.steps],
          }
        : item,
    )
    .map((item) => (release === undefined ? item : pinnedItem(item, release, context.registry)));
  const controllers = providersOf(context.deployPath, context.release).map((p) => p.controller);
  const policyFile = join(workDir, "client-networks.yaml");
  const items: PlanItem[] = [
    clusterApiItem(context, toolEnv),
    {
      id: "storage-class",
      title: `the lab StorageClass ${stack.storageClass.name}`,
      steps: [writeStep(storageClassFile, manifest(storageClass), "StorageClass"), applyFile(target, storageClassFile)],
    },
    {
      // Read before planning (the plan depends on it); shown here, in the seed's order, with the call that read it.
      id: "node-architecture",
      title: `the nodes' architecture: ${observations.architecture}`,
      steps: [
        action(
          "observed",
          `${observations.nodes} node${observations.nodes === 1 ? "" : "s"}, all ${observations.architecture}, read with: ${formatCall(kubectlCall(target, NODES_ARGS))}`,
          { mutates: false, params: { architecture: observations.architecture, nodes: observations.nodes } },
        ),
      ],
    },
    {
      id: "nico-credentials",
      title:
        nico === undefined
          ? `the NICo API key as Secret ${namespace}/${NICO_CREDENTIALS_SECRET}`
          : `the NICo API key as Secret ${nico.secret.namespace}/${nico.secret.name}, named by ${nico.identity.kind} ${nico.secret.namespace}/${NICO_IDENTITY_NAME}, and the controller's copy ${namespace}/${NICO_CREDENTIALS_SECRET}`,
      steps: [
        // The key goes on stdin, never in argv or a file.
        exec(
          kubectlCall(
            target,
            ["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "--force-conflicts", "--filename", "-"],
            {
              input: credentials,
            },
          ),
          { mutates: true },
        ),
      ],
    },
    ...deployItems,
    {
      id: "spire-patch",
      title: "the Cluster API controllers patched for SPIRE",
      steps: controllers.flatMap((c) => [
        exec(
          kubectlCall(target, [
            "patch",
            "deployment",
            c.name,
            "--namespace",
            c.namespace,
            "--type=strategic",
            `--patch=${spirePatch("manager")}`,
          ]),
          { mutates: true },
        ),
        exec(
          kubectlCall(target, [
            "rollout",
            "status",
            `deployment/${c.name}`,
            "--namespace",
            c.namespace,
            "--timeout=5m",
          ]),
          {
            mutates: false,
          },
        ),
      ]),
    },
    ...(policy === undefined
      ? []
      : [
          {
            id: "client-networks",
            title: `the NetworkPolicy admitting ${stack.clientNetworks.join(", ")} to the controller API`,
            steps: [writeStep(policyFile, manifest(policy), "NetworkPolicy"), applyFile(target, policyFile)],
          },
        ]),
    pruneItem({
      target,
      fieldManager: FIELD_MANAGER,
      inventoryFile: join(workDir, "install-record.yaml"),
      rendered: inventoryOf(context),
      record: context.record,
      observed: observations.prune,
      writeStep,
    }),
  ];
  return createPlan(`install the NVKE controller stack on site ${context.site.metadata.name}`, items, {
    site: context.site.metadata.name,
    deployPath: context.deployPath.name,
    architecture: observations.architecture,
    nodes: observations.nodes,
    installedProviders: observations.providers,
    ...(observations.prune === undefined
      ? {}
      : {
          inventory: {
            recorded: observations.prune.recorded.length,
            noLongerRendered: observations.prune.stale.map((o) => ({
              apiVersion: o.apiVersion,
              kind: o.kind,
              ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
              name: o.name,
              state: o.state,
            })),
          },
        }),
    ...(release === undefined
      ? {}
      : {
          release: {
            file: release.source,
            name: release.release.metadata.name,
            version: release.release.metadata.version,
          },
        }),
  });
}

/** A deploy path item under a release: its pinned values files written first, helm told how to reach the registry. */
function pinnedItem(item: PlanItem, release: ReleaseContext, registry: InstallContext["registry"]): PlanItem {
  const files = release.values.filter((file) => file.item === item.id);
  const registryArgs = [
    ...(registry?.plainHttp ? ["--plain-http"] : []),
    ...(registry?.caFile === undefined ? [] : ["--ca-file", registry.caFile]),
  ];
  const steps = item.steps.map((step) =>
    step.kind === "exec" && step.call.command === "helm" && registryArgs.length > 0
      ? { ...step, call: { ...step.call, args: [...step.call.args, ...registryArgs] } }
      : step,
  );
  const login = release.helmRegistryLogin;
  const pulls = steps.some((step) => step.kind === "exec" && step.call.command === "helm");
  const loginStep = login === undefined || !pulls ? [] : [registryConfigStep(login)];
  return { ...item, steps: [...files.map(pinnedValuesStep), ...loginStep, ...steps] };
}

/** What the dry run says of the registry config the run writes for helm: where, for which registries; never its content. */
function registryConfigStep(login: HelmRegistryLogin) {
  const hosts = Object.keys(login.auths).sort();
  return action(
    "helm-registry-config",
    `helm reads the registry credentials for ${hosts.join(", ")} from ${login.path}, generated from NODEKIT_REGISTRY_USERNAME/_PASSWORD (0600, in a fresh 0700 directory) before the run and removed after it`,
    { mutates: false, params: { path: login.path, registries: hosts } },
  );
}

function pinnedValuesStep(file: PinnedValuesFile) {
  const pins = file.pins.map((pin) => `${pin.field}: ${pin.from} -> ${pin.to}`).join(", ");
  return writeStep(file.path, file.content, `${file.source} with its images pinned by the release: ${pins}`);
}
