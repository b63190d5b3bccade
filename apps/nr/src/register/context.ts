import type { Transport } from "@nodekit/http";
import type { KubeTarget } from "@nodekit/kube";
import type { NodeRingsClient } from "@nodekit/noderings-api";
import { type DefinedPhase, type Phase, type PhaseOutputs, phase } from "@nodekit/phase-runner";
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
  /** A companion tool installed into ~/.nr/bin by this run (the CLI then gives the PATH advice). */
  onInstalled: (tool: string) => void;
}

/** What a phase's work needs besides its context: asked for before the run, only for the phases that will run. */
export interface PhaseUses {
  /** The companion tools it runs or installs: resolved (found, or planned for download) up front. */
  tools?: readonly ("helm" | "liqoctl" | "k3sInstaller")[];
  /** The secrets it writes: read (file, environment or prompt) up front, never in a dry run. */
  secrets?: readonly "proxmox"[];
}

/** One phase of `nr cluster register`: its definition, and what it uses. */
export type RegisterPhase<Out> = DefinedPhase<RegisterContext, Out> & { readonly uses: PhaseUses };

const define = phase<RegisterContext>();

/**
 * Defines a register phase (`apps/nr/src/register/phases/<id>.ts`): the phase runner's
 * definition, given only the context keys it `needs`, plus what it `uses`.
 */
export function registerPhase<K extends keyof RegisterContext, Obs = undefined, Out = PhaseOutputs>(
  definition: Phase<Pick<RegisterContext, K>, Obs, Out> & { readonly needs: readonly K[]; readonly uses: PhaseUses },
): RegisterPhase<Out> {
  return { ...define(definition), uses: definition.uses };
}
