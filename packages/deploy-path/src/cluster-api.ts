import { join } from "node:path";
import { clusterctlCall, type KubeTarget } from "@nodekit/kube-calls";
import { exec, type PlanItem } from "@nodekit/plan";
import { dump } from "js-yaml";
import type { ClusterApiPins } from "./schema.ts";

/** clusterctl's provider types (the `type` of a provider in its configuration and its inventory). */
export type ClusterApiProviderType =
  | "CoreProvider"
  | "BootstrapProvider"
  | "ControlPlaneProvider"
  | "InfrastructureProvider";

/** One provider `clusterctl init` installs, as clusterctl names it. */
export interface ClusterApiProvider {
  type: ClusterApiProviderType;
  name: string;
  /** Always with a leading v, as clusterctl writes it in its inventory. */
  version: string;
  /** clusterctl init's flag for it (`--core`, `--bootstrap`, `--control-plane`, `--infrastructure`). */
  flag: string;
  /** The provider's directory in a clusterctl repository: `{label}/{version}/{components}`. */
  label: string;
  /** Its components file in that directory (beside `metadata.yaml`). */
  components: string;
  /** The provider's controller Deployment. */
  controller: { namespace: string; name: string };
}

/** Where clusterctl reads the providers and cert-manager from (local directories; never GitHub). */
export interface ClusterApiRepository {
  /** The directory holding `{label}/{version}/{components, metadata.yaml}` for every provider. */
  providers: string;
  /** The directory holding `cert-manager/{version}/cert-manager.yaml`; `providers` when left out. */
  certManager?: string;
}

/** `1.2.3` → `v1.2.3`: the form clusterctl's flags, inventory and repository directories use. */
export const clusterctlVersion = (version: string): string => (version.startsWith("v") ? version : `v${version}`);

/**
 * The providers `spec.clusterAPI` pins, in the order clusterctl installs them: the core
 * provider, the kubeadm bootstrap and control-plane providers (clusterctl init always installs
 * these three, at the core version), then each infrastructure provider.
 */
export function clusterApiProviders(pins: ClusterApiPins): ClusterApiProvider[] {
  const core = clusterctlVersion(pins.version);
  return [
    {
      type: "CoreProvider",
      name: "cluster-api",
      version: core,
      flag: "--core",
      label: "cluster-api",
      components: "core-components.yaml",
      controller: { namespace: "capi-system", name: "capi-controller-manager" },
    },
    {
      type: "BootstrapProvider",
      name: "kubeadm",
      version: core,
      flag: "--bootstrap",
      label: "bootstrap-kubeadm",
      components: "bootstrap-components.yaml",
      controller: { namespace: "capi-kubeadm-bootstrap-system", name: "capi-kubeadm-bootstrap-controller-manager" },
    },
    {
      type: "ControlPlaneProvider",
      name: "kubeadm",
      version: core,
      flag: "--control-plane",
      label: "control-plane-kubeadm",
      components: "control-plane-components.yaml",
      controller: {
        namespace: "capi-kubeadm-control-plane-system",
        name: "capi-kubeadm-control-plane-controller-manager",
      },
    },
    ...pins.infrastructure.map((p): ClusterApiProvider => {
      const [namespace = "", name = ""] = p.controller.split("/");
      return {
        type: "InfrastructureProvider",
        name: p.name,
        version: clusterctlVersion(p.version),
        flag: "--infrastructure",
        label: `infrastructure-${p.name}`,
        components: "infrastructure-components.yaml",
        controller: { namespace, name },
      };
    }),
  ];
}

/** A provider's key in clusterctl's inventory and in `installed`: `type/name`. */
export const providerKey = (p: { type: string; name: string }): string => `${p.type}/${p.name}`;

const certManagerFile = (pins: ClusterApiPins, repository: ClusterApiRepository) =>
  join(
    repository.certManager ?? repository.providers,
    "cert-manager",
    clusterctlVersion(pins.certManager),
    "cert-manager.yaml",
  );

const componentsFile = (p: ClusterApiProvider, repository: ClusterApiRepository) =>
  join(repository.providers, p.label, p.version, p.components);

/** Every file clusterctl reads from the repository: each provider's components and metadata.yaml, and cert-manager's. */
export function clusterApiRepositoryFiles(
  pins: ClusterApiPins,
  providers: readonly ClusterApiProvider[],
  repository: ClusterApiRepository,
): string[] {
  return [
    ...providers.flatMap((p) => [
      componentsFile(p, repository),
      join(repository.providers, p.label, p.version, "metadata.yaml"),
    ]),
    certManagerFile(pins, repository),
  ];
}

/** The clusterctl configuration (`clusterctl.yaml`): every provider and cert-manager from the local repository. */
export function clusterctlConfig(
  pins: ClusterApiPins,
  providers: readonly ClusterApiProvider[],
  repository: ClusterApiRepository,
): string {
  return dump(
    {
      providers: providers.map((p) => ({ name: p.name, type: p.type, url: `file://${componentsFile(p, repository)}` })),
      "cert-manager": {
        url: `file://${certManagerFile(pins, repository)}`,
        version: clusterctlVersion(pins.certManager),
      },
    },
    { lineWidth: -1 },
  );
}

/** What clusterctl's inventory holds against the pins: what is missing, and what sits at another version. */
export interface InstalledProviders<P extends ClusterApiProvider = ClusterApiProvider> {
  missing: P[];
  /** Installed at a version other than the pinned one (clusterctl init does not upgrade; clusterctl upgrade does). */
  mismatched: Array<{ provider: P; installed: string }>;
}

/** Compares the providers with clusterctl's inventory (`type/name` → version; empty on a fresh cluster). */
export function compareInstalledProviders<P extends ClusterApiProvider>(
  providers: readonly P[],
  installed: Readonly<Record<string, string>>,
): InstalledProviders<P> {
  const missing: P[] = [];
  const mismatched: InstalledProviders<P>["mismatched"] = [];
  for (const provider of providers) {
    const found = installed[providerKey(provider)];
    if (found === undefined) missing.push(provider);
    else if (found !== provider.version) mismatched.push({ provider, installed: found });
  }
  return { missing, mismatched };
}

export interface PlanClusterApiOptions<P extends ClusterApiProvider = ClusterApiProvider> {
  target: KubeTarget;
  /** clusterctl's environment: a HOME of its own (see @nodekit/kube-calls' isolatedToolEnv). */
  toolEnv: Record<string, string>;
  /** Where the clusterctl configuration is written before the call (see `clusterctlConfig`). */
  configFile: string;
  repository: ClusterApiRepository;
  /** Every provider of the site, as the configuration lists them; default the ones the pins name. */
  providers?: readonly P[];
  /**
   * clusterctl's inventory (`type/name` → version): the providers in it are not installed
   * again. One installed at another version is moved to the pinned one with `clusterctl
   * upgrade apply` when `upgrade` names it, and returned as `refused` otherwise (clusterctl
   * init never upgrades a provider: the caller refuses it or plans the upgrade).
   */
  installed?: Readonly<Record<string, string>>;
  /** The `type/name` of the installed providers to upgrade to the pinned version. */
  upgrade?: ReadonlySet<string>;
  /** `--wait-provider-timeout`, in seconds (default 600). */
  waitSeconds?: number;
}

export interface PlannedClusterApi<P extends ClusterApiProvider = ClusterApiProvider> {
  /** The `cluster-api` plan item: clusterctl init of the missing providers, then clusterctl upgrade apply of `upgrades`. */
  item: PlanItem;
  /** The clusterctl configuration to write to `configFile` before the item runs. */
  config: string;
  missing: P[];
  upgrades: Array<{ provider: P; installed: string }>;
  /** Installed at another version and not named in `upgrade`: nothing is planned for them. */
  refused: Array<{ provider: P; installed: string }>;
}

/**
 * `clusterctl init` for the providers not yet installed and `clusterctl upgrade apply` for
 * those `upgrade` names, as a plan item (id `cluster-api`), with the configuration both read:
 * write `config` to `configFile`, then run the item's calls. Each call names the
 * configuration and every provider at its version, so clusterctl takes exactly these from the
 * local repository (never GitHub) and waits for them. With every provider installed at its
 * pin the item has no steps.
 */
export function planClusterApi<P extends ClusterApiProvider = ClusterApiProvider>(
  pins: ClusterApiPins,
  options: PlanClusterApiOptions<P>,
): PlannedClusterApi<P> {
  const providers: readonly P[] = options.providers ?? (clusterApiProviders(pins) as P[]);
  const { missing, mismatched } = compareInstalledProviders(providers, options.installed ?? {});
  const upgrades = mismatched.filter((m) => options.upgrade?.has(providerKey(m.provider)) === true);
  const refused = mismatched.filter((m) => !upgrades.includes(m));
  const title = `Cluster API ${clusterctlVersion(pins.version)} (clusterctl init)`;
  const config = clusterctlConfig(pins, providers, options.repository);
  if (missing.length === 0 && upgrades.length === 0) {
    const item = { id: "cluster-api", title: `${title}: every provider is installed`, steps: [] };
    return { item, config, missing, upgrades, refused };
  }
  const flags = (list: readonly P[]) => list.flatMap((p) => [p.flag, `${p.name}:${p.version}`]);
  const wait = ["--wait-providers", "--wait-provider-timeout", String(options.waitSeconds ?? 600)];
  const calls = [
    ...(missing.length === 0 ? [] : [["init", "--config", options.configFile, ...flags(missing), ...wait]]),
    ...(upgrades.length === 0
      ? []
      : [["upgrade", "apply", "--config", options.configFile, ...flags(upgrades.map((u) => u.provider)), ...wait]]),
  ];
  const reads = [options.configFile, ...clusterApiRepositoryFiles(pins, providers, options.repository)];
  const upgraded = upgrades.map((u) => `${u.provider.label} ${u.installed} → ${u.provider.version}`);
  return {
    item: {
      id: "cluster-api",
      title:
        upgrades.length === 0
          ? title
          : `Cluster API ${clusterctlVersion(pins.version)}: clusterctl upgrade apply of ${upgraded.join(", ")}${missing.length === 0 ? "" : ", clusterctl init of the rest"}`,
      steps: calls.map((args) => exec(clusterctlCall(options.target, args, options.toolEnv), { mutates: true, reads })),
    },
    config,
    missing,
    upgrades,
    refused,
  };
}
