import { join } from "node:path";
import {
  createStateStore,
  inspectLock,
  type PhaseStatusRow,
  type RunState,
  type RunStatusReport,
  runStatus,
} from "@nodekit/phase-runner";
import type * as z from "zod";
import { RecordedAgent, RecordedPins, recorded } from "../register/meta.ts";
import { agent as agentPhase } from "../register/phases/agent.ts";
import { operator } from "../register/phases/operator.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import { UPGRADE_PHASES, UPGRADE_STATE } from "../upgrade/phases.ts";
import { assertNrHome, nrLockPath, nrPaths } from "./home.ts";
import { type LiveHealth, type LiveOptions, liveHealth } from "./live.ts";

/** What `nr cluster status` shows (NR-15), and what `-o json|yaml` prints. */
export interface RegistrationStatus extends RunStatusReport {
  stateFile: string;
  agent: { name?: string; agentId?: string; id?: string } | undefined;
  api: string | undefined;
  pins: z.infer<typeof RecordedPins> | undefined;
  /** Whether VMs can be sold: the operator runs. */
  operatorInstalled: boolean;
  /** The command to run next, or undefined when nothing is left to do. */
  nextStep: string | undefined;
  /** A run holding the lock right now. */
  runningPid: number | undefined;
  /** An `nr cluster upgrade` that has not finished (failed, interrupted or running): where it stopped. */
  upgrade?: UpgradeStatus;
  /** With `--live`: the running machine's health, checked now (read-only). */
  live?: LiveHealth;
}

/** Where an unfinished `nr cluster upgrade` stands, from its own state (~/.nr/upgrade-state.json). */
interface UpgradeStatus {
  status: "failed" | "interrupted" | "running";
  stateFile: string;
  /** The pin sets it moves from and to. */
  from: string | undefined;
  to: string | undefined;
  /** The component (the upgrade's phase) it stopped at, or is at. */
  component: string | undefined;
  phases: PhaseStatusRow[];
  lastError: RunState["lastError"];
  updatedAt: string | undefined;
  /** The command that continues it, or undefined while it runs. */
  nextStep: string | undefined;
}

/** The upgrade's state when it did not finish (a finished one, or none, is undefined). */
async function upgradeStatus(home: string, env: NodeJS.ProcessEnv): Promise<UpgradeStatus | undefined> {
  const stateFile = join(home, UPGRADE_STATE);
  const state = await createStateStore({ path: stateFile }).read(UPGRADE_PHASES);
  if (state === undefined) return undefined;
  const machineLock = await inspectLock(stateFile, { path: nrLockPath(env) });
  const lock =
    machineLock.state === "held" && machineLock.owner !== undefined && machineLock.owner.runId !== state.runId
      ? ({ state: "free" } as const)
      : machineLock;
  const report = runStatus(UPGRADE_PHASES, state, lock);
  if (report.status !== "failed" && report.status !== "interrupted" && report.status !== "running") return undefined;
  const stopped =
    report.phases.find((phase) => phase.state === "running" || phase.state === "failed")?.id ?? report.next;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    status: report.status,
    stateFile,
    from: text(state.meta.from),
    to: text(state.meta.to),
    component: stopped,
    phases: report.phases,
    lastError: report.lastError,
    updatedAt: report.updatedAt,
    nextStep:
      report.status === "running"
        ? undefined
        : `nr cluster upgrade${lock.state === "stale" ? " --break-lock" : ""} (with the flags the upgrade had: it continues at ${stopped ?? "its next component"}; --plan shows what is left)`,
  };
}

/** Reads the state (none yet is fine; an invalid one is RUN_STATE_INVALID) and where the lock stands. */
export async function registrationStatus(
  env: NodeJS.ProcessEnv = process.env,
  live?: Omit<LiveOptions, "paths" | "env">,
): Promise<RegistrationStatus> {
  const paths = nrPaths(env);
  await assertNrHome(paths);
  const store = createStateStore({ path: paths.state });
  const state: RunState | undefined = await store.read(REGISTER_PHASES);
  // The machine's one lock: this state's run holds it when the owner's run id is the state's.
  const machineLock = await inspectLock(paths.state, { path: nrLockPath(env) });
  const lock =
    machineLock.state === "held" && machineLock.owner !== undefined && machineLock.owner.runId !== state?.runId
      ? ({ state: "free" } as const)
      : machineLock;
  const report = runStatus(REGISTER_PHASES, state, lock);
  const agentOutputs = state?.phases[agentPhase.id]?.outputs;
  // A name NodeRings refused is not the machine's agent.
  const registeredAs =
    state?.phases[agentPhase.id]?.state === "done" ? recorded(RecordedAgent, state.meta.agent) : undefined;
  const agent =
    state === undefined
      ? undefined
      : {
          ...registeredAs,
          ...(typeof agentOutputs?.agentId === "string" ? { id: agentOutputs.agentId } : {}),
          ...(typeof agentOutputs?.name === "string" ? { name: agentOutputs.name } : {}),
        };
  const operatorInstalled = report.phases.find((p) => p.id === operator.id)?.state === "done";
  let nextStep: string | undefined;
  if (report.status === "none") nextStep = "nr cluster register --name NAME --api-url URL";
  else if (report.status === "running") nextStep = undefined;
  else if (lock.state === "stale") nextStep = "nr cluster register --resume --break-lock";
  else if (report.status === "failed" || report.status === "interrupted") nextStep = "nr cluster register --resume";
  else if (!operatorInstalled) {
    nextStep =
      "nr cluster register --resume --proxmox-credentials FILE (installs the operator: VMs cannot be sold until it runs)";
  }
  const upgrade = state === undefined ? undefined : await upgradeStatus(paths.home, env);
  // A complete registration whose upgrade stopped: continuing the upgrade is what is left.
  if (nextStep === undefined && report.status === "succeeded") nextStep = upgrade?.nextStep;
  return {
    ...report,
    stateFile: paths.state,
    agent,
    api: typeof state?.meta.api === "string" ? state.meta.api : undefined,
    pins: recorded(RecordedPins, state?.meta.pins),
    operatorInstalled,
    nextStep,
    runningPid: lock.state === "held" ? lock.owner?.pid : undefined,
    ...(upgrade === undefined ? {} : { upgrade }),
    ...(live === undefined || state === undefined ? {} : { live: await liveHealth(state, { ...live, paths, env }) }),
  };
}
