import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import { helmCall, isolatedToolEnv, type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import { type Plan, planFrom } from "@nodekit/plan";
import type { ProcessRunner } from "@nodekit/process";
import { errorCodes } from "../errors.ts";
import {
  type InstallContext,
  type InstallInputs,
  planInstall,
  preflightInstall,
  prepareInstall,
  type RunInstallOptions,
  runInstall,
  upgradeTarget,
} from "./install.ts";
import { describeObject } from "./install-prune.ts";
import { INSTALL_RECORD, type InstallRecord, type OwnedObject } from "./install-record.ts";
import { contractIn, planUpgrade, providerKey, type UpgradePlan } from "./upgrade-plan.ts";

// `nvkectl upgrade apply` (issue 26 §2, NV-15): the upgrade `upgrade plan` prints, applied
// through the install's own runner. It reads and checks everything the install does (the
// documents, the tools, the nodes, the installed providers, the record; with --release, every
// artifact's content hashed again from the registry), computes the upgrade plan from the
// record as it reads it now, refuses what the plan refuses, refuses a site that drifted from
// its record, and then runs the install's plan for the new inputs, in which the providers the
// plan upgrades go through `clusterctl upgrade apply` instead of `clusterctl init`; its last
// item writes the new record. --dry-run prints exactly the calls the run makes.
//
// Drift, precisely: the record is what nvkectl last installed; the site drifted from it when
// something the record names is not on the site as recorded, and not as the upgrade would
// leave it either (a run that stopped midway has moved some parts already: those are the
// upgrade's own, which --from-item continues). Compared are what the site itself can say:
//   - each recorded Cluster API provider: installed (clusterctl's inventory,
//     providers.clusterctl.cluster.x-k8s.io) at its recorded version or the target's;
//   - each recorded chart item: its Helm release there (helm list --all in its namespace),
//     of its recorded chart version or the target's;
//   - each object the install applied itself (the record's inventory): there, unless the
//     target no longer renders it (the prune of a stopped run may have deleted it).
// The items' digests over their files are compared by the plan (record against the new
// inputs), not with the site: helm keeps no chart digest, and a manifest's objects are
// applied again as a whole.

export interface UpgradeApplyOptions {
  inputs: InstallInputs;
  runner: ProcessRunner;
  dryRun: boolean;
  fromItem?: string | undefined;
  onEvent?: RunInstallOptions["onEvent"];
}

export interface UpgradeApplyResult {
  /** The upgrade plan applied (what `upgrade plan` prints). */
  upgrade: UpgradePlan;
  /** The install's plan it ran (or, with --dry-run, would run from --from-item). */
  plan: Plan;
  /** The plan items that ran. */
  ran: readonly string[];
}

/** One thing on the site that is neither as recorded nor as the upgrade leaves it. */
interface Drift {
  what: string;
  recorded: string;
  found: string;
}

const where = (kubeconfig: string, doing: string) => ({ doing, kubeconfig, cluster: "the site cluster" });

/** The type as kubectl takes it, unambiguous without discovery: `Kind.version.group`. */
function kubectlType(object: OwnedObject): string {
  const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
  return `${object.kind}.${version}.${group}`;
}

function providerDrift(context: InstallContext, record: InstallRecord, upgrade: UpgradePlan): Drift[] {
  const installed = context.observations.providers;
  const target = new Map(upgrade.providers.map((p) => [providerKey(p), p.to]));
  return record.providers.flatMap((p) => {
    const found = installed[providerKey(p)];
    if (found === p.version || (found !== undefined && found === target.get(providerKey(p)))) return [];
    return [
      {
        what: `Cluster API provider ${p.name} (${p.type})`,
        recorded: p.version,
        found: found === undefined ? "not installed" : found,
      },
    ];
  });
}

async function chartDrift(
  runner: ProcessRunner,
  context: InstallContext,
  record: InstallRecord,
  target: KubeTarget,
): Promise<Drift[]> {
  const charts = record.items.filter((item) => item.kind === "chart");
  const toolEnv = isolatedToolEnv(join(context.workDir, "home"));
  const targetVersions = new Map(context.record.items.map((item) => [item.id, item.version]));
  const drift: Drift[] = [];
  for (const namespace of new Set(charts.map((item) => item.namespace ?? "default"))) {
    const answer = await runKube(
      runner,
      helmCall(target, ["list", "--all", "--namespace", namespace, "--output", "json"], toolEnv),
      where(target.kubeconfig, `listing the Helm releases in ${namespace}`),
    );
    const releases = answer.found
      ? (JSON.parse(answer.stdout || "[]") as Array<{ name?: string; chart?: string; status?: string }>)
      : [];
    for (const item of charts.filter((i) => (i.namespace ?? "default") === namespace)) {
      const name = item.release ?? item.id;
      const release = releases.find((r) => r.name === name);
      const allowed = [item.version, targetVersions.get(item.id)].filter((v): v is string => v !== undefined);
      if (release !== undefined && allowed.some((version) => release.chart?.endsWith(`-${version}`))) continue;
      drift.push({
        what: `Helm release ${namespace}/${name} (item ${item.id})`,
        recorded: `chart ${item.version ?? "?"}`,
        found: release === undefined ? "not installed" : `chart ${release.chart ?? "?"} (${release.status ?? "?"})`,
      });
    }
  }
  return drift;
}

async function objectDrift(
  runner: ProcessRunner,
  context: InstallContext,
  record: InstallRecord,
  target: KubeTarget,
): Promise<Drift[]> {
  const key = (o: Omit<OwnedObject, "item">) => `${o.kind}/${o.namespace ?? ""}/${o.name}`;
  const rendered = new Set(context.record.objects.map(key));
  const wanted = record.objects.filter((o) => rendered.has(key(o)));
  const found = new Set<string>();
  for (const namespace of new Set(wanted.map((o) => o.namespace))) {
    const here = wanted.filter((o) => o.namespace === namespace);
    const answer = await runKube(
      runner,
      kubectlCall(target, [
        "get",
        ...here.map((o) => `${kubectlType(o)}/${o.name}`),
        ...(namespace === undefined ? [] : ["--namespace", namespace]),
        "--ignore-not-found",
        "--output=json",
      ]),
      where(
        target.kubeconfig,
        `reading the objects the install recorded${namespace === undefined ? "" : ` in ${namespace}`}`,
      ),
    );
    if (!answer.found || answer.stdout.trim() === "") continue;
    const parsed = JSON.parse(answer.stdout) as {
      kind?: string;
      items?: Array<{ kind?: string; metadata?: { name?: string; namespace?: string } }>;
      metadata?: { name?: string; namespace?: string };
    };
    for (const object of parsed.kind === "List" ? (parsed.items ?? []) : [parsed]) {
      found.add(`${object.kind}/${namespace ?? ""}/${object.metadata?.name}`);
    }
  }
  return wanted
    .filter((o) => !found.has(key(o)))
    .map((o) => ({ what: `${describeObject(o)} (item ${o.item})`, recorded: "applied by the install", found: "gone" }));
}

/** What on the site is neither as its record says nor as this upgrade leaves it (see the top of this file). */
async function siteDrift(
  runner: ProcessRunner,
  context: InstallContext,
  record: InstallRecord,
  upgrade: UpgradePlan,
): Promise<Drift[]> {
  return [
    ...providerDrift(context, record, upgrade),
    ...(await chartDrift(runner, context, record, context.target)),
    ...(await objectDrift(runner, context, record, context.target)),
  ];
}

/**
 * `nvkectl upgrade apply`: read and check as the install does, plan the upgrade from the
 * site's record, refuse what the plan refuses and a drifted site; then print (dry run) or
 * run the install's plan for the new inputs, through the install's runner.
 */
export async function upgradeApply(options: UpgradeApplyOptions): Promise<UpgradeApplyResult> {
  const { inputs, runner } = options;
  // The documents, the tools, the cluster, the record; with --release, every artifact's content again.
  const context = await prepareInstall(inputs, runner);
  const record = context.observations.prune?.record;
  if (record === undefined) {
    throw new UserError(
      errorCodes.INSTALL_RECORD_NOT_FOUND,
      `the site cluster has no install record (ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}); there is nothing to upgrade from; nothing was changed`,
      {
        why: "the upgrade applies what upgrade plan computes from the record and these inputs",
        next: "check that the kubeconfig names the site cluster; a site without a record is installed with nvkectl install",
      },
    );
  }
  const { releaseSeries } = await upgradeTarget(inputs);
  const upgrade = planUpgrade(record, context.record, (provider, version) =>
    contractIn({ releaseSeries: releaseSeries.get(providerKey(provider)) }, version),
  );
  if (upgrade.refused.length > 0) {
    throw new UserError(
      errorCodes.UPGRADE_REFUSED,
      `the upgrade of site ${upgrade.site} to ${upgrade.to.release ?? `deploy path ${upgrade.to.deployPath}`} is refused; nothing was changed:\n  ${upgrade.refused.join("\n  ")}`,
      {
        why: "the upgrade never moves a release, chart or provider back, and follows clusterctl's contract rules",
        next: "nvkectl upgrade plan with the same inputs shows the whole plan; upgrade to a release (or deploy path) it accepts",
        facts: { refused: upgrade.refused.length },
      },
    );
  }
  const drift = await siteDrift(runner, context, record, upgrade);
  if (drift.length > 0) {
    throw new UserError(
      errorCodes.UPGRADE_SITE_DRIFTED,
      `site ${upgrade.site} drifted from its install record (ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}, installed ${record.installedAt}); nothing was changed:\n  ${drift.map((d) => `${d.what}: recorded ${d.recorded}, found ${d.found}`).join("\n  ")}`,
      {
        why: "the upgrade plan is computed from the record; applied to a site that no longer matches it, it would not do what the plan says",
        next: "put the site back as recorded (nvkectl install with the inputs the record names), or find who changed it; then plan again",
        facts: { drifted: drift.length },
      },
    );
  }
  const providerUpgrades = new Set(upgrade.providers.filter((p) => p.change === "upgrade").map(providerKey));
  const upgrading: InstallContext = { ...context, providerUpgrades };
  const plan = planInstall(upgrading);
  // The dry run checks what the run checks, and shows the plan as --from-item runs it.
  await preflightInstall(upgrading, plan, options.fromItem);
  if (options.dryRun) return { upgrade, plan: planFrom(plan, options.fromItem), ran: [] };
  const result = await runInstall(upgrading, plan, {
    runner,
    fromItem: options.fromItem,
    onEvent: options.onEvent,
    redactor: inputs.redactor,
  });
  return { upgrade, plan, ran: result.ran };
}
