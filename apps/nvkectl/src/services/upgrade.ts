import { UserError } from "@nodekit/errors";
import type { ProcessRunner } from "@nodekit/process";
import { errorCodes } from "../errors.ts";
import { type InstallInputs, upgradeTarget } from "./install.ts";
import { INSTALL_RECORD, readInstallRecord } from "./install-record.ts";
import { siteToolTarget } from "./kubectl.ts";
import { contractIn, planUpgrade, providerKey, type UpgradePlan } from "./upgrade-plan.ts";

export interface UpgradePlanOptions {
  inputs: InstallInputs;
  runner: ProcessRunner;
}

/**
 * `nvkectl upgrade plan`: the site's install record (one kubectl request) against what the
 * install would record for these inputs, a newer release or deploy path; read-only.
 */
export async function upgradePlan(options: UpgradePlanOptions): Promise<UpgradePlan> {
  const { inputs } = options;
  const target = await siteToolTarget(inputs);
  const [record, wanted] = await Promise.all([readInstallRecord(options.runner, target), upgradeTarget(inputs)]);
  if (record === undefined) {
    throw new UserError(
      errorCodes.INSTALL_RECORD_NOT_FOUND,
      `the site cluster has no install record (ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}); there is nothing to upgrade from`,
      {
        why: "the upgrade plan compares what the record says is installed with what these inputs install",
        next: "check that the kubeconfig names the site cluster; a site without a record is installed with nvkectl install",
      },
    );
  }
  return planUpgrade(record, wanted.content, (provider, version) =>
    contractIn({ releaseSeries: wanted.releaseSeries.get(providerKey(provider)) }, version),
  );
}

const table = (rows: string[][]): string[] => {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd((widths[column] ?? 0) + 3)))
      .join("")
      .trimEnd(),
  );
};

/** The plan for people, as kubeadm upgrade plan and clusterctl upgrade plan print theirs. */
export function upgradePlanLines(plan: UpgradePlan): string[] {
  const from = `${plan.from.release ?? "no release"} (deploy path ${plan.from.deployPath}, installed ${plan.from.installedAt})`;
  const to = `${plan.to.release ?? "no release"} (deploy path ${plan.to.deployPath})`;
  const lines = [`Upgrade plan for site ${plan.site}: ${from} → ${to}`, ""];
  lines.push(
    ...table([
      ["ITEM", "KIND", "CHANGE", "FROM", "TO", "RESTARTS"],
      ...plan.items.map((i) => [
        i.id,
        i.kind,
        i.change,
        i.fromVersion ?? i.fromDigest?.slice(0, 19) ?? "-",
        i.toVersion ?? i.toDigest?.slice(0, 19) ?? "-",
        i.restarts ?? "-",
      ]),
    ]),
  );
  lines.push("");
  lines.push(
    ...table([
      ["PROVIDER", "TYPE", "CHANGE", "FROM", "TO", "CONTRACT"],
      ...plan.providers.map((p) => [
        p.name,
        p.type,
        p.change,
        p.from ?? "-",
        p.to ?? "-",
        `${p.fromContract ?? "?"} → ${p.toContract ?? "?"}`,
      ]),
    ]),
  );
  lines.push("", `Stack config: ${plan.stackConfigChanged ? "changed since the install" : "unchanged"}`);
  if (plan.refused.length > 0) lines.push("", "Refused:", ...plan.refused.map((line) => `  ${line}`));
  return lines;
}
