import type { DeployPath } from "@nodekit/deploy-path";
import type { KubeTarget } from "@nodekit/kube";
import type { Redactor } from "@nodekit/process";
import type { SiteSpec } from "@nodekit/sitespec";
import type { StackConfig } from "@nodekit/stack-config";
import type { PruneObservation } from "../install-prune.ts";
import type { InstallRecord } from "../install-record.ts";
import type { HelmRegistryLogin } from "../install-registry-login.ts";
import type { ReleasePinning } from "../install-release.ts";
import type { SiteClusterInputs } from "../kubectl.ts";
import type { RegistryAccess } from "../release-artifacts.ts";

/** The field manager of every server-side apply the install makes. */
export const FIELD_MANAGER = "nvkectl";
/** The label the shipped controller chart gives its pods itself (its Deployment selects by it). */
export const CONTROLLER_NAME_LABEL = { key: "app.kubernetes.io/name", value: "nvke-controller" } as const;
/** The controller's copy of the NICo API key, in its own namespace (a pod reads Secrets of its namespace only). */
export const NICO_CREDENTIALS_SECRET = "nvke-nico-credentials";
/** The NicoIdentity the install creates for the NICo provider's credentials Secret. */
export const NICO_IDENTITY_NAME = "default";
export const ARCHITECTURES = ["amd64", "arm64"] as const;
export type Architecture = (typeof ARCHITECTURES)[number];
/** The plan items the install adds around the deploy path's; a deploy path item may not use these names. */
export const OWN_ITEMS = [
  "cluster-api",
  "storage-class",
  "node-architecture",
  "nico-credentials",
  "spire-patch",
  "client-networks",
  "prune",
] as const;

export interface InstallInputs extends SiteClusterInputs {
  /** The site spec file, as the user named it. */
  siteSpec: string;
  stackConfig: string;
  /** The deploy path directory (default: the shipped deploy/nico). */
  deployPath: string;
  /** Where the install keeps the files it renders and helm/clusterctl's own HOME; default under XDG_STATE_HOME. */
  workDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Every secret read (the NICo API key) is registered here before anything is planned. */
  redactor: Redactor;
  /** A release description (release export wrote it): charts, images and providers pinned by digest. */
  release?: string | undefined;
  /** How the release's registry is reached (for the provider components and helm's pulls). */
  registry?: Pick<RegistryAccess, "plainHttp" | "caFile" | "allowTokenRealms" | "warn"> | undefined;
  /** The clock the install record's time is read from. */
  now?: () => Date;
}

export type ReleaseProvider = ReleasePinning["release"]["providers"][number];

/** What `--release` adds to the context: the pinned deploy path, the providers' components, helm's registry login. */
export interface ReleaseContext extends ReleasePinning {
  /** `type/name` → the release's provider. */
  providers: ReadonlyMap<string, ReleaseProvider>;
  /** The docker-format file helm reads registry credentials from (the user's helm or docker config), when one exists. */
  helmRegistryConfig?: string;
  /**
   * With the registry credential in the environment: the config the run writes for helm
   * (outside the plan) and removes after it; helm reads it instead of helmRegistryConfig.
   */
  helmRegistryLogin?: HelmRegistryLogin;
  /** The stack's images, pinned by the release; set once the architecture is known. */
  stackImages?: { profiles: string; controller?: string };
}

/** What the read-only observations found; the planner decides from this alone. */
interface InstallObservations {
  architecture: Architecture;
  nodes: number;
  /** Installed Cluster API providers, `type/name` → version (the clusterctl inventory). */
  providers: Record<string, string>;
  /** The install's inventory and what it lists that is no longer rendered (absent: nothing recorded). */
  prune?: PruneObservation;
}

/** Everything read before planning: the documents, then the cluster. */
export interface InstallContext {
  site: SiteSpec;
  stack: StackConfig;
  /** The stack config's directory: its relative paths resolve from here. */
  stackDir: string;
  deployPath: DeployPath;
  target: KubeTarget;
  workDir: string;
  nicoApiKey: string;
  observations: InstallObservations;
  release?: ReleaseContext;
  registry?: InstallInputs["registry"] & { env?: NodeJS.ProcessEnv };
  /** The install record the run writes last (install-record.ts). */
  record: InstallRecord;
  /**
   * `type/name` of the installed providers this run moves to the pinned version with
   * clusterctl upgrade apply (`nvkectl upgrade apply`, after its plan allowed it); any other
   * installed at another version is refused (PROVIDER_VERSION_MISMATCH).
   */
  providerUpgrades?: ReadonlySet<string>;
}

export const WORK_DIR = "the install's work directory";

export const where = (kubeconfig: string, doing: string) => ({ doing, kubeconfig, cluster: "the site cluster" });
