import type { KubeTarget } from "@nodekit/kube";
import type { NodeRingsClient } from "@nodekit/noderings-api";
import { type DefinedPhase, type Phase, type PhaseOutputs, phase } from "@nodekit/phase-runner";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import type { NrPaths } from "../services/home.ts";
import type { RecordedInstall } from "./recorded.ts";

/** Everything the phases of `nr cluster reset` work with; each phase is given only the keys it names. */
export interface ResetContext {
  api: NodeRingsClient;
  /** What the registration recorded that nr created: all that is removed. */
  recorded: RecordedInstall;
  /** `--force`: NodeRings unreachable is not a failure; only this machine's side is removed. */
  force: boolean;
  kube: KubeTarget;
  paths: NrPaths;
  runner: ProcessRunner;
  /** The companion tools as found on this machine (a reset downloads nothing). */
  tools: { liqoctl(): Promise<string>; helm(): Promise<string> };
  /** Where `k3s-uninstall.sh` is looked for (PATH; the installer puts it in /usr/local/bin). */
  env: NodeJS.ProcessEnv;
  /** Where the tigera operator manifests are (as the registration had them). */
  calicoManifests: string;
  helmEnv: Record<string, string>;
  wait: { seconds: number };
  redactor: Redactor;
  /** Where the registration's state goes (`~/.nr/archive/<time>/`). */
  archiveDir: string;
}

const define = phase<ResetContext>();

/** One phase of `nr cluster reset`. */
export type ResetPhase<Out> = DefinedPhase<ResetContext, Out>;

/** Defines a reset phase: given only the context keys it `needs`. */
export function resetPhase<K extends keyof ResetContext, Obs = undefined, Out = PhaseOutputs>(
  definition: Phase<Pick<ResetContext, K>, Obs, Out> & { readonly needs: readonly K[] },
): ResetPhase<Out> {
  return define(definition);
}
