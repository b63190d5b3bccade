import { rename } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import { isolatedToolEnv } from "@nodekit/kube";
import { createStateStore, type PlannedRun, planPhases, type RunResult, runPhases } from "@nodekit/phase-runner";
import { errorCodes } from "../errors.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import type { ResetContext } from "../reset/context.ts";
import { RESET_PHASES, TEARDOWN_CONSUMER_KUBECONFIG, TEARDOWN_PEERING_KUBECONFIG } from "../reset/phases.ts";
import { RecordedInstall, recordedInstall } from "../reset/recorded.ts";
import { calicoManifestsBase } from "./calico.ts";
import { apiEndpoint, assertNrHome, loadNrConfig, nrLockPath, nrPaths } from "./home.ts";
import { kubeFailure, nodeRingsApi, type RunServiceOptions } from "./run-parts.ts";
import { findInstalledTool } from "./tools.ts";

export interface ResetOptions extends RunServiceOptions {
  apiUrl?: string | undefined;
  force: boolean;
  calicoManifests?: string | undefined;
  dryRun: boolean;
  waitSeconds: number;
  apiTimeoutMs?: number | undefined;
  /** The archive directory's time (default now). */
  clock?: () => Date;
}

export type ResetOutcome =
  | { kind: "plan"; planned: PlannedRun }
  | { kind: "done"; result: RunResult; archive: string; left: string[] };

/** Where the reset's own checkpoints are while it runs; archived with the registration's state when it is done. */
export const RESET_STATE = "reset-state.json";

/**
 * `nr cluster reset`: reads what the registration recorded that nr created (or, resumed, what
 * the reset copied of it on its first run), then runs the reverse phases — or, with `dryRun`,
 * plans them and changes nothing. Checkpointed in `~/.nr/reset-state.json` and resumable as
 * register is; holds the machine's one lock, so a register and a reset never run together.
 */
export async function reset(options: ResetOptions): Promise<ResetOutcome> {
  const { env, redactor } = options;
  const paths = nrPaths(env);
  await assertNrHome(paths);
  const store = createStateStore({ path: join(paths.home, RESET_STATE) });
  const earlier = await store.read(RESET_PHASES);
  const fromEarlier = earlier === undefined ? undefined : RecordedInstall.safeParse(earlier.meta.recorded);
  let recorded: RecordedInstall;
  let archiveDir: string;
  if (earlier !== undefined && fromEarlier?.success === true && typeof earlier.meta.archive === "string") {
    recorded = fromEarlier.data;
    archiveDir = earlier.meta.archive;
  } else {
    const registration = await createStateStore({ path: paths.state }).read(REGISTER_PHASES);
    if (registration === undefined) {
      throw new UserError(
        errorCodes.RESET_NOTHING_RECORDED,
        `nothing to reset: no registration is recorded in ${paths.state}`,
        {
          why: "nr cluster reset removes only what a registration recorded that nr created",
          next: "nothing to do; a registration archived by an earlier reset is in ~/.nr/archive/",
        },
      );
    }
    recorded = recordedInstall(registration, paths.state);
    const stamp = (options.clock ?? (() => new Date()))().toISOString().replace(/[:.]/g, "-");
    archiveDir = join(paths.home, "archive", stamp);
  }
  const config = await loadNrConfig(paths);
  const endpoint = apiEndpoint({ apiUrl: options.apiUrl ?? recorded.api }, config, env);
  if (endpoint.token !== undefined) redactor.add(endpoint.token, "the NodeRings API token");
  const api = nodeRingsApi(endpoint, options);
  const tool = (name: "liqoctl" | "helm", version: string | undefined) => async () => {
    const found = await findInstalledTool(name, { paths, runner: options.runner, env, version });
    if (found.path !== undefined) return found.path;
    throw new UserError(
      errorCodes.RESET_TOOL_MISSING,
      `nr cluster reset needs ${name}${version === undefined ? "" : ` ${version}`}, and it is not on this machine`,
      {
        why: `found: ${found.found}; a reset downloads nothing`,
        next: `put ${name}${version === undefined ? "" : ` ${version}`} on PATH (or run nr cluster register --resume to install it into ~/.nr/bin), then run the reset again`,
      },
    );
  };
  const kube = { kubeconfig: recorded.kubeconfig };
  const context: ResetContext = {
    api,
    recorded,
    force: options.force,
    kube,
    paths,
    runner: options.runner,
    // liqoctl's version must be Liqo's (liqotech/liqo docs: liqoctl and Liqo are released together).
    tools: { liqoctl: tool("liqoctl", recorded.liqo?.version), helm: tool("helm", undefined) },
    env,
    // --calico-manifests overrides; else where the registration (or the last upgrade) took them from.
    calicoManifests:
      options.calicoManifests ??
      recorded.calico?.manifests ??
      calicoManifestsBase(recorded.calico?.version ?? recorded.pins.calico ?? ""),
    helmEnv: isolatedToolEnv(join(paths.run, "helm")),
    wait: { seconds: options.waitSeconds },
    redactor,
    archiveDir,
  };
  const common = {
    name: "nr cluster reset",
    phases: RESET_PHASES,
    context,
    store,
    // A reset always continues an earlier one: it is the same reset until it finished.
    resume: true,
  };
  if (options.dryRun) return { kind: "plan", planned: await planPhases(common) };
  const result = await runPhases({
    ...common,
    runner: options.planRunner ?? options.runner,
    redactor,
    meta: { recorded, archive: archiveDir },
    lock: { path: nrLockPath(env) },
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    describeFailure: kubeFailure("resetting", kube.kubeconfig),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    beforeRun: async () => {
      const { rm } = await import("node:fs/promises");
      for (const name of [TEARDOWN_PEERING_KUBECONFIG, TEARDOWN_CONSUMER_KUBECONFIG]) {
        await rm(join(paths.run, name), { force: true });
      }
    },
  });
  // The reset is done: its own record goes beside the registration's.
  await rename(join(paths.home, RESET_STATE), join(archiveDir, RESET_STATE));
  const left = [
    ...(result.outputs.of("unpeer")?.noderings === "left" ? ["the agent's peering in NodeRings"] : []),
    ...(result.outputs.of("deregister")?.noderings === "left"
      ? [`agent ${recorded.agent?.name ?? ""} in NodeRings`]
      : []),
  ];
  return { kind: "done", result, archive: archiveDir, left };
}
