import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "@nodekit/errors";
import { ensurePrivateDir } from "@nodekit/fs-safe";
import {
  clusterctlCall,
  helmCall,
  isolatedToolEnv,
  type KubeTarget,
  kubectlCall,
  kubeToolError,
  runKube,
} from "@nodekit/kube";
import { action, createPlan, exec, type Plan, type PlanItem, type PlanStep, planFrom, runPlan } from "@nodekit/plan";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import { errorCodes } from "../errors.ts";
import { describeObject } from "./install-prune.ts";
import type { OwnedObject } from "./install-record.ts";
import { INSTALL_RECORD, type InstallRecord, readInstallRecord } from "./install-record.ts";
import { type SiteClusterInputs, siteToolTarget } from "./kubectl.ts";
import { clusterctlFor, SITE_KUBE_TOOLS, toolProblems } from "./tools.ts";

// `nvkectl uninstall` (issue 26 §2, NV-16): the reverse plan of what the install record says
// was installed, after read-only observations, printed by --dry-run exactly as a run executes
// it. It refuses while tenant clusters (Cluster API Clusters) exist, unless --force; it
// removes what the install made and nothing else, and leaves the site cluster as site
// bootstrap left it: the record goes last, so a run that stops midway can be run again, or
// continued with --from-item.

/** The label clusterctl puts on every cert-manager object it installs (clusterctl's ClusterctlCoreLabelName). */
const CERT_MANAGER_LABEL = "clusterctl.cluster.x-k8s.io/core=cert-manager";
/** cert-manager's kinds, in deletion order: its webhooks first (a delete must not call a webhook that is gone). */
const CERT_MANAGER_KINDS = [
  "mutatingwebhookconfigurations.admissionregistration.k8s.io",
  "validatingwebhookconfigurations.admissionregistration.k8s.io",
  "deployments.apps",
  "services",
  "serviceaccounts",
  "configmaps",
  "roles.rbac.authorization.k8s.io",
  "rolebindings.rbac.authorization.k8s.io",
  "clusterroles.rbac.authorization.k8s.io",
  "clusterrolebindings.rbac.authorization.k8s.io",
  "customresourcedefinitions.apiextensions.k8s.io",
  "namespaces",
];

/** The order clusterctl delete removes providers in: everything that builds on the core provider first. */
const PROVIDER_ORDER = ["InfrastructureProvider", "ControlPlaneProvider", "BootstrapProvider", "CoreProvider"];
const PROVIDER_FLAG: Record<string, string> = {
  InfrastructureProvider: "--infrastructure",
  ControlPlaneProvider: "--control-plane",
  BootstrapProvider: "--bootstrap",
  CoreProvider: "--core",
};
/** The label clusterctl gives a provider's components (cluster.x-k8s.io/provider), from `type/name`. */
function providerLabel(key: string): string {
  const name = nameOf(key);
  const type = typeOf(key);
  if (type === "CoreProvider") return name;
  if (type === "BootstrapProvider") return `bootstrap-${name}`;
  if (type === "ControlPlaneProvider") return `control-plane-${name}`;
  return `infrastructure-${name}`;
}
const typeOf = (key: string) => key.split("/")[0] ?? "";
const nameOf = (key: string) => key.split("/")[1] ?? "";

export interface UninstallInputs extends SiteClusterInputs {
  /** Uninstall although tenant clusters exist (they lose their management plane). */
  force: boolean;
  workDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

interface UninstallObservations {
  record: InstallRecord;
  /** The tenant clusters found, `namespace/name`. */
  tenantClusters: string[];
  /** The Cluster API providers installed, `type/name`. */
  providers: string[];
  /** The Helm releases of the record's chart items that are there, `namespace/release`. */
  releases: string[];
}

export interface UninstallContext {
  target: KubeTarget;
  workDir: string;
  observations: UninstallObservations;
}

const where = (kubeconfig: string, doing: string) => ({ doing, kubeconfig, cluster: "the site cluster" });

/** The record, the tools, then the cluster (read-only, in both modes). */
export async function prepareUninstall(inputs: UninstallInputs, runner: ProcessRunner): Promise<UninstallContext> {
  const cwd = inputs.cwd ?? process.cwd();
  const env = inputs.env ?? process.env;
  const target = await siteToolTarget({ ...inputs, cwd });
  const { kubeconfig } = target;
  const record = await readInstallRecord(runner, target);
  if (record === undefined) {
    throw new UserError(
      errorCodes.INSTALL_RECORD_NOT_FOUND,
      `the site cluster has no install record (ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}); nothing was changed`,
      {
        why: "the uninstall removes what the install record says was installed, and nothing else",
        next: "check that the kubeconfig names the site cluster; a site installed by an nvkectl that wrote no record is uninstalled by hand (docs/install.md, Uninstall)",
      },
    );
  }
  const core = record.providers.find((p) => p.type === "CoreProvider");
  const tools = SITE_KUBE_TOOLS.map((tool) =>
    tool.spec.command === "clusterctl" && core !== undefined ? clusterctlFor(core.version) : tool,
  );
  const problems = await toolProblems(runner, tools);
  if (problems.length > 0) {
    throw new UserError(
      errorCodes.INSTALL_PREREQUISITES_MISSING,
      `the uninstall needs ${problems.length === 1 ? "a tool" : `${problems.length} tools`} this host lacks; nothing was changed:\n  ${problems.join("\n  ")}`,
      {
        why: "the uninstall runs kubectl, helm and clusterctl",
        next: "install what is listed, on PATH, then run it again",
      },
    );
  }
  const tenantClusters = await listed(
    runner,
    target,
    ["get", "clusters.cluster.x-k8s.io", "--all-namespaces", "--output=json"],
    "reading the tenant clusters",
    (o) => `${o.metadata?.namespace}/${o.metadata?.name}`,
  );
  if (tenantClusters.length > 0 && !inputs.force) {
    throw new UserError(
      errorCodes.UNINSTALL_TENANT_CLUSTERS_EXIST,
      `the site still manages ${tenantClusters.length} tenant cluster${tenantClusters.length === 1 ? "" : "s"} (${tenantClusters.join(", ")}); nothing was changed`,
      {
        why: "uninstalling the controller stack removes Cluster API, which manages them: they would be left running, unmanaged",
        next: "delete them first (nvkectl delete cluster NAME --wait), or uninstall anyway with --force",
        facts: { tenantClusters: tenantClusters.length },
      },
    );
  }
  const providers = await listed(
    runner,
    target,
    ["get", "providers.clusterctl.cluster.x-k8s.io", "--all-namespaces", "--output=json"],
    "reading the installed Cluster API providers",
    (o) => `${o.type}/${o.providerName}`,
  );
  const releases: string[] = [];
  const toolEnv = isolatedToolEnv(join(workDirOf(inputs, record, env, cwd), "home"));
  for (const namespace of new Set(
    record.items.flatMap((i) => (i.kind === "chart" ? [i.namespace ?? "default"] : [])),
  )) {
    const answer = await runKube(
      runner,
      helmCall(target, ["list", "--all", "--namespace", namespace, "--output", "json"], toolEnv),
      where(kubeconfig, `listing the Helm releases in ${namespace}`),
    );
    const found = answer.found ? (JSON.parse(answer.stdout || "[]") as Array<{ name?: string }>) : [];
    for (const release of found) releases.push(`${namespace}/${release.name}`);
  }
  return {
    target,
    workDir: workDirOf(inputs, record, env, cwd),
    observations: { record, tenantClusters, providers, releases },
  };
}

function workDirOf(inputs: UninstallInputs, record: InstallRecord, env: NodeJS.ProcessEnv, cwd: string): string {
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return resolve(cwd, inputs.workDir ?? join(stateHome, "nvkectl", "install", record.site || "site"));
}

async function listed(
  runner: ProcessRunner,
  target: KubeTarget,
  args: string[],
  doing: string,
  key: (object: Record<string, string | undefined> & { metadata?: { name?: string; namespace?: string } }) => string,
): Promise<string[]> {
  const answer = await runKube(runner, kubectlCall(target, args), where(target.kubeconfig, doing));
  if (!answer.found) return [];
  const items = (JSON.parse(answer.stdout) as { items?: Array<Parameters<typeof key>[0]> }).items ?? [];
  return items.map(key).sort();
}

/** The type as kubectl takes it, unambiguous without discovery: `Kind.version.group`. */
function kubectlType(object: OwnedObject): string {
  const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
  return `${object.kind}.${version}.${group}`;
}

const deleteObject = (target: KubeTarget, object: OwnedObject) =>
  exec(
    kubectlCall(target, [
      "delete",
      kubectlType(object),
      object.name,
      ...(object.namespace === undefined ? [] : ["--namespace", object.namespace]),
      "--ignore-not-found",
    ]),
    { mutates: true },
  );

/** The install's items, last first, each undoing what it applied. */
function planUninstall(context: UninstallContext): Plan {
  const { target, observations } = context;
  const { record } = observations;
  const toolEnv = isolatedToolEnv(join(context.workDir, "home"));
  const objectsOf = (item: string) => record.objects.filter((o) => o.item === item).reverse();
  const objectsItem = (id: string, what: string): PlanItem => {
    const objects = objectsOf(id);
    return {
      id,
      title: objects.length === 0 ? `${what}: nothing recorded` : `${what}: ${objects.map(describeObject).join(", ")}`,
      steps: objects.map((o) => deleteObject(target, o)),
    };
  };
  const deployItems = [...record.items].reverse().map((item): PlanItem => {
    if (item.kind === "chart") {
      const namespace = item.namespace ?? "default";
      const release = item.release ?? item.id;
      const present = observations.releases.includes(`${namespace}/${release}`);
      return {
        id: item.id,
        title: present
          ? `helm uninstall ${release} (chart ${item.chart ?? "?"} ${item.version ?? ""}) from ${namespace}`
          : `the Helm release ${namespace}/${release} is gone already`,
        steps: present
          ? [
              exec(
                helmCall(
                  target,
                  ["uninstall", release, "--namespace", namespace, "--wait", "--timeout", "5m"],
                  toolEnv,
                ),
                { mutates: true },
              ),
            ]
          : [],
      };
    }
    return objectsItem(item.id, `the objects of manifest item ${item.id}`);
  });
  const providers = observations.providers;
  const clusterApi: PlanItem = {
    id: "cluster-api",
    title:
      providers.length === 0
        ? `Cluster API: no provider is installed; cert-manager ${record.certManager} (objects labelled ${CERT_MANAGER_LABEL})`
        : `Cluster API: clusterctl delete of each provider, the core provider last (${providers.join(", ")}, their CRDs and namespaces), then cert-manager ${record.certManager}, which clusterctl init installed and clusterctl delete leaves`,
    steps: [
      ...(providers.length === 0
        ? []
        : [
            action("work-dir", `clusterctl's HOME: ${join(context.workDir, "home")} (0700)`, {
              mutates: true,
              params: { path: join(context.workDir, "home") },
            }),
            // One provider at a time, the core provider last: with --all, clusterctl deletes the
            // core provider's CRDs first and then fails listing ClusterClasses for the next one.
            ...[...providers]
              .sort((a, b) => PROVIDER_ORDER.indexOf(typeOf(a)) - PROVIDER_ORDER.indexOf(typeOf(b)))
              .map((provider) =>
                exec(
                  clusterctlCall(
                    target,
                    [
                      "delete",
                      PROVIDER_FLAG[typeOf(provider)] ?? "--infrastructure",
                      nameOf(provider),
                      "--include-crd",
                      "--include-namespace",
                    ],
                    toolEnv,
                  ),
                  { mutates: true },
                ),
              ),
          ]),
      // What clusterctl delete leaves of the providers' components (their cluster-wide RBAC, and
      // clusterctl's own inventory CRD): every object clusterctl labelled as a provider's.
      ...(providers.length === 0
        ? []
        : [
            exec(
              kubectlCall(target, [
                "delete",
                CERT_MANAGER_KINDS.join(","),
                "--all-namespaces",
                `--selector=cluster.x-k8s.io/provider in (${providers.map(providerLabel).join(",")})`,
                "--ignore-not-found",
              ]),
              { mutates: true },
            ),
            exec(
              kubectlCall(target, [
                "delete",
                "customresourcedefinitions.apiextensions.k8s.io",
                "providers.clusterctl.cluster.x-k8s.io",
                "--ignore-not-found",
              ]),
              { mutates: true },
            ),
          ]),
      exec(
        kubectlCall(target, [
          "delete",
          CERT_MANAGER_KINDS.join(","),
          "--all-namespaces",
          `--selector=${CERT_MANAGER_LABEL}`,
          "--ignore-not-found",
        ]),
        { mutates: true },
      ),
    ],
  };
  const crdSteps: PlanStep[] = record.crds.map((name) =>
    exec(
      kubectlCall(target, ["delete", "customresourcedefinitions.apiextensions.k8s.io", name, "--ignore-not-found"]),
      {
        mutates: true,
      },
    ),
  );
  const items: PlanItem[] = [
    objectsItem("client-networks", "the client-networks NetworkPolicy"),
    { id: "spire-patch", title: "the SPIRE patch goes with the Cluster API controllers", steps: [] },
    ...deployItems,
    objectsItem("nico-credentials", "the NICo credentials"),
    objectsItem("storage-class", "the lab StorageClass"),
    clusterApi,
    {
      id: "namespaces",
      title: `the namespaces and CRDs the install created: ${[...record.namespaces, ...record.crds].join(", ") || "none"}`,
      steps: [
        ...crdSteps,
        ...[...record.namespaces].reverse().map((namespace) =>
          exec(kubectlCall(target, ["delete", "namespace", namespace, "--ignore-not-found", "--wait=true"]), {
            mutates: true,
          }),
        ),
      ],
    },
    {
      id: "record",
      title: `the install record ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}, last`,
      steps: [
        exec(
          kubectlCall(target, [
            "delete",
            "ConfigMap.v1.",
            INSTALL_RECORD.name,
            "--namespace",
            INSTALL_RECORD.namespace,
            "--ignore-not-found",
          ]),
          { mutates: true },
        ),
      ],
    },
  ];
  return createPlan(`uninstall the NVKE controller stack from site ${record.site}`, items, {
    site: record.site,
    deployPath: record.deployPath,
    installedAt: record.installedAt,
    ...(record.release === undefined
      ? {}
      : { release: { name: record.release.name, version: record.release.version, digest: record.release.digest } }),
    tenantClusters: observations.tenantClusters,
    providers,
    releases: observations.releases,
  });
}

export interface UninstallOptions {
  inputs: UninstallInputs;
  runner: ProcessRunner;
  dryRun: boolean;
  fromItem?: string | undefined;
  redactor: Redactor;
  onEvent?: Parameters<typeof runPlan>[1]["onEvent"];
}

/** `nvkectl uninstall`: read, observe, plan; then print (dry run) or execute that same plan. */
export async function uninstall(options: UninstallOptions): Promise<{ plan: Plan; ran: readonly string[] }> {
  const context = await prepareUninstall(options.inputs, options.runner);
  const plan = planUninstall(context);
  // An unknown --from-item is refused by the dry run as by the run.
  const shown = planFrom(plan, options.fromItem);
  if (options.dryRun) return { plan: shown, ran: [] };
  const result = await runPlan(plan, {
    runner: options.runner,
    fromItem: options.fromItem,
    redactor: options.redactor,
    actions: {
      "work-dir": async (step) => {
        await ensurePrivateDir(String(step.params?.path), { mode: 0o700, what: "clusterctl's HOME" });
      },
    },
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    describeFailure: (error, step) =>
      kubeToolError(error, step.call, where(context.target.kubeconfig, `running ${step.call.command}`)),
  });
  return { plan, ran: result.ran };
}
