import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { BugError, UserError } from "@nodekit/errors";
import { ensurePrivateDir, writeFileSafe } from "@nodekit/fs-safe";
import { kubeToolError } from "@nodekit/kube";
import { type ActionHandler, type Plan, planFrom, runPlan } from "@nodekit/plan";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import { errorCodes } from "../../errors.ts";
import {
  type RegistryConfigHooks,
  removeLeftoverRegistryConfig,
  withHelmRegistryConfig,
} from "../install-registry-login.ts";
import { checkProviderRepository } from "./cluster-api.ts";
import { type InstallContext, type InstallInputs, WORK_DIR, where } from "./context.ts";
import { planInstall } from "./plan.ts";
import { prepareInstall } from "./prepare.ts";

/**
 * The handlers of the plan's actions: the rendered files and the release's provider
 * components, written 0600 in the work dir (@nodekit/fs-safe). What is written there is
 * applied to the cluster with admin rights next, so the work dir must be private (another
 * user could swap a manifest otherwise), and a file is never written through a link nor
 * over another user's file.
 */
export const installActions = (
  context: InstallContext,
  redactor: Redactor,
): Readonly<Record<string, ActionHandler>> => ({
  "pull-provider": async (step) => {
    const { openRegistry } = await import("../release-artifacts.ts");
    const { fetchProviderFiles } = await import("@nodekit/release");
    const client = await openRegistry({ ...context.registry, redactor });
    const reference = String(step.params?.reference);
    const wanted = (step.params?.files ?? []) as string[];
    const files = await fetchProviderFiles(
      client,
      { reference, digest: String(step.params?.digest) },
      { only: wanted },
    );
    const lacking = wanted.filter((name) => !files.has(name));
    if (lacking.length > 0) {
      throw new UserError(
        errorCodes.RELEASE_INCOMPLETE_FOR_INSTALL,
        `the provider components ${reference}@${String(step.params?.digest)} lack ${lacking.join(", ")}`,
        { why: "clusterctl needs the components and metadata.yaml of each provider" },
      );
    }
    const dir = String(step.params?.dir);
    await ensurePrivateDir(dir, { mode: 0o700, what: WORK_DIR });
    for (const name of wanted) {
      await writeFileSafe(join(dir, name), files.get(name) ?? new Uint8Array(), {
        mode: 0o600,
        what: "a provider components file",
      });
    }
  },
  // Written by runInstall around the plan (the password is in no step); here it must be in place.
  "helm-registry-config": async (step) => {
    const path = String(step.params?.path);
    const present = await stat(path).then(
      (info) => info.isFile(),
      () => false,
    );
    if (!present) throw new BugError(`the generated helm registry config ${path} is missing`);
  },
  // What was observed before planning; nothing is left to do when the plan runs.
  observed: async () => {},
  "write-file": async (step) => {
    const path = String(step.params?.path);
    await ensurePrivateDir(dirname(path), { mode: 0o700, what: WORK_DIR });
    await writeFileSafe(path, String(step.params?.content), { mode: 0o600, what: "the rendered file" });
  },
});

export interface RunInstallOptions {
  runner: ProcessRunner;
  fromItem?: string | undefined;
  onEvent?: Parameters<typeof runPlan>[1]["onEvent"];
  redactor: Redactor;
  /** How the generated helm registry config is removed if the process ends mid-run (default: on exit and signals). */
  registryConfigHooks?: RegistryConfigHooks;
}

/**
 * What a run checks before its first change, and a dry run checks the same way: the item to
 * start from exists (PLAN_ITEM_UNKNOWN), and clusterctl will find every file it needs.
 */
export async function preflightInstall(context: InstallContext, plan: Plan, fromItem?: string): Promise<void> {
  // Only what runs is checked: the items before --from-item have no steps in planFrom's plan.
  await checkProviderRepository(context, planFrom(plan, fromItem));
}

/** Executes exactly the plan the dry run prints, item by item; stops at the first failure, naming item and call. */
export async function runInstall(context: InstallContext, plan: Plan, options: RunInstallOptions) {
  await removeLeftoverRegistryConfig(context.workDir);
  await preflightInstall(context, plan, options.fromItem);
  const login = context.release?.helmRegistryLogin;
  if (login === undefined) return runPlanned(context, plan, options);
  return withHelmRegistryConfig(login, () => runPlanned(context, plan, options), options.registryConfigHooks);
}

function runPlanned(context: InstallContext, plan: Plan, options: RunInstallOptions) {
  return runPlan(plan, {
    runner: options.runner,
    actions: installActions(context, options.redactor),
    fromItem: options.fromItem,
    redactor: options.redactor,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    // "installing nvke-controller runs helm", not "running helm runs helm".
    describeFailure: (error, step, item) =>
      kubeToolError(error, step.call, where(context.target.kubeconfig, `installing ${item.id}`)),
  });
}

export interface InstallOptions {
  inputs: InstallInputs;
  /** Runs the read-only observations (both modes) and, in a real run, the plan. */
  runner: ProcessRunner;
  dryRun: boolean;
  fromItem?: string | undefined;
  onEvent?: RunInstallOptions["onEvent"];
}

/** `nvkectl install`: read, observe, plan; then print (dry run) or execute that same plan. */
export async function install(options: InstallOptions): Promise<{ plan: Plan; ran: readonly string[] }> {
  const context = await prepareInstall(options.inputs, options.runner);
  const plan = planInstall(context);
  // The dry run runs every check the run makes, and shows the plan as --from-item runs it.
  await preflightInstall(context, plan, options.fromItem);
  if (options.dryRun) return { plan: planFrom(plan, options.fromItem), ran: [] };
  const result = await runInstall(context, plan, {
    runner: options.runner,
    fromItem: options.fromItem,
    onEvent: options.onEvent,
    redactor: options.inputs.redactor,
  });
  return { plan, ran: result.ran };
}
