import type { Transport } from "@nodekit/http";
import type { KubeTarget } from "@nodekit/kube";
import type { NodeRingsClient } from "@nodekit/noderings-api";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import type { Arch, ResolvedPins } from "@nodekit/version-pins";
import type { ProxmoxCredentials } from "../services/credentials.ts";
import type { NrPaths } from "../services/home.ts";
import type { HostFactsSource } from "../services/host.ts";
import type { NetworkPlan } from "../services/network.ts";
import type { InstallerDecision, ToolDecision } from "../services/tools.ts";

/** Everything a registration's phases work with; each phase is given only the keys it names. */
export interface RegisterContext {
  api: NodeRingsClient;
  pins: ResolvedPins;
  arch: Arch;
  /** `--name` or `--agent-id` (or what the state recorded). */
  identity: { name?: string | undefined; agentId?: string | undefined };
  network: NetworkPlan;
  host: HostFactsSource;
  skipPrechecks: boolean;
  /** The agent cluster: k3s's kubeconfig, or `--kubeconfig`. */
  kube: KubeTarget;
  paths: NrPaths;
  /** Runs read-only look-ups, probes, and the calls actions make in-process. */
  runner: ProcessRunner;
  tools: {
    liqoctl(): Promise<ToolDecision>;
    helm(): Promise<ToolDecision>;
    k3sInstaller(): Promise<InstallerDecision>;
  };
  /** Where the tigera operator manifests come from (Calico's release, or a mirror). */
  calicoManifests: string;
  offload: readonly string[];
  operator: {
    skip: boolean;
    /** The chart helm installs: the pinned one, or `--operator-chart`. */
    chart: string;
    version: string;
    namespace: string;
    release: string;
    secretName: string;
    /** Where the credentials come from, for the plan ("file /root/pve.yaml"). */
    credentialsSource: string;
    /** Read before the run starts when the operator is still to install, else when its phase runs again; never in a dry run. */
    credentials: () => Promise<ProxmoxCredentials>;
  };
  /** How long each wait may take, and how often to ask. */
  wait: { seconds: number; pollMs: number };
  /** helm's own HOME and XDG directories (isolatedToolEnv). */
  helmEnv: Record<string, string>;
  redactor: Redactor;
  /** The User-Agent-like name in health reports, e.g. `nr/0.1.0`. */
  reporter: string;
  clock: () => Date;
  transport: Transport | undefined;
  /** Progress of downloads, for a TTY. */
  onDownload: ((tool: string, received: number, total: number | undefined) => void) | undefined;
}
