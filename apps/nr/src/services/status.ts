import { createStateStore, inspectLock, type RunState, type RunStatusReport, runStatus } from "@nodekit/phase-runner";
import type * as z from "zod";
import { RecordedAgent, RecordedPins, recorded } from "../register/meta.ts";
import { agent as agentPhase } from "../register/phases/agent.ts";
import { operator } from "../register/phases/operator.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import { assertNrHome, nrPaths } from "./home.ts";

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
}

/** Reads the state (none yet is fine; an invalid one is RUN_STATE_INVALID) and where the lock stands. */
export async function registrationStatus(env: NodeJS.ProcessEnv = process.env): Promise<RegistrationStatus> {
  const paths = nrPaths(env);
  await assertNrHome(paths);
  const store = createStateStore({ path: paths.state });
  const state: RunState | undefined = await store.read(REGISTER_PHASES);
  const lock = await inspectLock(paths.state);
  const report = runStatus(REGISTER_PHASES, state, lock);
  const agentOutputs = state?.phases[agentPhase.id]?.outputs;
  const registeredAs = recorded(RecordedAgent, state?.meta.agent);
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
  return {
    ...report,
    stateFile: paths.state,
    agent,
    api: typeof state?.meta.api === "string" ? state.meta.api : undefined,
    pins: recorded(RecordedPins, state?.meta.pins),
    operatorInstalled,
    nextStep,
    runningPid: lock.state === "held" ? lock.owner?.pid : undefined,
  };
}
