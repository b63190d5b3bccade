import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { calicoOperator } from "./calico-operator.ts";
import { type StandIns, type StandInsOptions, standIns } from "./shims.ts";

// What every test that registers a pretend VM on an agent cluster sets up the same way
// (apps/nr's register, day-2 and upgrade tests, the Ansible fleet test): the VM's programs
// and the platform's helm pin.

/** The phases of `nr cluster register`, in the order a registration runs them. */
export const REGISTER_PHASES = [
  "agent",
  "prechecks",
  "k3s",
  "calico",
  "liqo",
  "outbound-peer",
  "offloading",
  "inbound-peering",
  "operator",
  "verify",
] as const;

export interface AgentVmOptions extends Omit<StandInsOptions, "platformClusterId"> {
  /** The test tier's binaries (kubectl, helm): on PATH after the stand-ins. */
  binDir: string;
  /** NodeRings' Liqo cluster id (default the NodeRings emulator's, `noderings-emulator`). */
  platformClusterId?: string;
  /** How soon Calico's operator stand-in retries a watch or reconcile that failed (its default unless told). */
  calicoRetryMs?: number;
}

export interface AgentVm {
  stand: StandIns;
  /** PATH for nr on this VM: the stand-ins first, then the test tier's binaries, then this process's PATH. */
  path: string;
  /** Stops Calico's operator stand-in. */
  stop(): void;
}

/**
 * A provider VM's programs on its agent cluster: the k3s installer's and liqoctl's stand-ins
 * in `<dir>/stand-ins` (standIns()) and Calico's operator stand-in reconciling the cluster.
 */
export async function agentVm(dir: string, options: AgentVmOptions): Promise<AgentVm> {
  const { binDir, calicoRetryMs, platformClusterId = "noderings-emulator", ...standInOptions } = options;
  const stand = await standIns(dir, { ...standInOptions, platformClusterId });
  const stop = calicoOperator(options.kubeconfig, calicoRetryMs === undefined ? {} : { retryMs: calicoRetryMs });
  return { stand, path: `${stand.bin}:${binDir}:${process.env.PATH ?? ""}`, stop };
}

/**
 * Pins the helm of `binDir` on the NodeRings emulator (its version), so nr's operator phase
 * uses that helm: another version would be replaced by the emulator's download, which only
 * answers `version`. Returns the pin set it serves now: build further pins on it, not on
 * `emulator.pins`, which stays the emulator's own (its helm).
 */
export function pinTestbinHelm<Pins extends { tools: { helm: { version: string } } }>(
  emulator: { readonly pins: Pins; setPins(value: unknown): void },
  binDir: string,
): Pins {
  const pins = structuredClone(emulator.pins);
  pins.tools.helm.version = execFileSync(join(binDir, "helm"), ["version", "--template", "{{.Version}}"], {
    encoding: "utf8",
  }).trim();
  emulator.setPins(pins);
  return structuredClone(pins);
}
