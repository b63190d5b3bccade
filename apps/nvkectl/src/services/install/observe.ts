import type { DeployPath } from "@nodekit/deploy-path";
import { UserError } from "@nodekit/errors";
import { type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import type { ProcessRunner } from "@nodekit/process";
import { errorCodes } from "../../errors.ts";
import { clusterctlFor, SITE_KUBE_TOOLS, toolProblems } from "../tools.ts";
import { providersOf } from "./cluster-api.ts";
import { ARCHITECTURES, type Architecture, type ReleaseContext, where } from "./context.ts";

/** What the install reads before it plans (both modes, read-only): the tools, the nodes, the installed providers. */

export const NODES_ARGS = ["get", "nodes", "--output=json"];

/** The nodes' one architecture, read from the cluster: NODE_ARCHITECTURE_UNKNOWN / _MIXED otherwise. */
export async function observeArchitecture(runner: ProcessRunner, target: KubeTarget) {
  const answer = await runKube(
    runner,
    kubectlCall(target, NODES_ARGS),
    where(target.kubeconfig, "reading the nodes' architecture"),
  );
  const items = answer.found ? ((JSON.parse(answer.stdout) as { items?: unknown[] }).items ?? []) : ([] as unknown[]);
  const byArch = new Map<string, string[]>();
  for (const node of items as Array<{
    metadata?: { name?: string; labels?: Record<string, string> };
    status?: { nodeInfo?: { architecture?: string } };
  }>) {
    const arch = node.metadata?.labels?.["kubernetes.io/arch"] ?? node.status?.nodeInfo?.architecture ?? "unknown";
    byArch.set(arch, [...(byArch.get(arch) ?? []), node.metadata?.name ?? "?"]);
  }
  if (items.length === 0) {
    throw new UserError(errorCodes.NODE_ARCHITECTURE_UNKNOWN, "the site cluster has no nodes", {
      why: "the images the stack runs are chosen for the nodes' architecture",
      next: "check that the kubeconfig names the site cluster and that its nodes have joined",
    });
  }
  if (byArch.size > 1) {
    const list = [...byArch].map(([arch, names]) => `${arch} (${names.join(", ")})`).join("; ");
    throw new UserError(
      errorCodes.NODE_ARCHITECTURE_MIXED,
      `the site cluster's nodes are of more than one architecture: ${list}`,
      {
        why: "the stack is installed with the images of one architecture",
        facts: { architectures: [...byArch.keys()].join(",") },
      },
    );
  }
  const [arch] = [...byArch.keys()];
  if (!(ARCHITECTURES as readonly string[]).includes(arch ?? "")) {
    throw new UserError(
      errorCodes.NODE_ARCHITECTURE_UNKNOWN,
      `the site cluster's nodes are ${arch}, which the stack has no images for`,
      {
        why: `the stack ships images for ${ARCHITECTURES.join(" and ")}`,
        facts: { architecture: arch ?? "unknown" },
      },
    );
  }
  return { architecture: arch as Architecture, nodes: items.length };
}

/** The Cluster API providers already installed (clusterctl's inventory), `type/name` → version. */
export async function observeProviders(runner: ProcessRunner, target: KubeTarget): Promise<Record<string, string>> {
  const answer = await runKube(
    runner,
    kubectlCall(target, ["get", "providers.clusterctl.cluster.x-k8s.io", "--all-namespaces", "--output=json"]),
    where(target.kubeconfig, "reading the installed Cluster API providers"),
  );
  if (!answer.found) return {};
  const items = (
    JSON.parse(answer.stdout) as { items?: Array<{ type?: string; providerName?: string; version?: string }> }
  ).items;
  return Object.fromEntries((items ?? []).map((p) => [`${p.type}/${p.providerName}`, p.version ?? ""]));
}

/**
 * kubectl, helm and clusterctl, every one asked its version before the cluster is asked
 * anything (in the dry run too), every problem at once: the install never starts a change
 * it cannot finish for want of a tool. clusterctl must be of the Cluster API release series
 * the deploy path (or the release) pins.
 */
export async function checkTools(runner: ProcessRunner, deployPath: DeployPath, release: ReleaseContext | undefined) {
  const core = providersOf(deployPath, release).find((p) => p.type === "CoreProvider");
  const tools = SITE_KUBE_TOOLS.map((tool) =>
    tool.spec.command === "clusterctl" && core !== undefined ? clusterctlFor(core.version) : tool,
  );
  const problems = await toolProblems(runner, tools);
  if (problems.length === 0) return;
  throw new UserError(
    errorCodes.INSTALL_PREREQUISITES_MISSING,
    `the install needs ${problems.length === 1 ? "a tool" : `${problems.length} tools`} this host lacks; nothing was changed:\n  ${problems.join("\n  ")}`,
    {
      why: "the install runs kubectl, helm and clusterctl; all are checked before the first change, so a missing one never leaves a half-installed site",
      next: "install what is listed, on PATH, then run the install again",
      facts: { missing: problems.length },
    },
  );
}
