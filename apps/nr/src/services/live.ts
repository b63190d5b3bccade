import { join } from "node:path";
import { isUserError } from "@nodekit/errors";
import type { Transport } from "@nodekit/http";
import { isolatedToolEnv } from "@nodekit/kube";
import { createNodeRingsClient, type HealthCheck } from "@nodekit/noderings-api";
import type { RunState } from "@nodekit/phase-runner";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import type { RegisterContext } from "../register/context.ts";
import { RecordedPins, recorded } from "../register/meta.ts";
import { agent } from "../register/phases/agent.ts";
import { calico, calicoChecks } from "../register/phases/calico.ts";
import { check } from "../register/phases/common.ts";
import { peeringChecks, reverseChecks } from "../register/phases/inbound-peering.ts";
import { k3s, k3sChecks, nodeReadyChecks } from "../register/phases/k3s.ts";
import { liqo, liqoChecks } from "../register/phases/liqo.ts";
import { offloading, offloadingChecks } from "../register/phases/offloading.ts";
import { operator, operatorChecks } from "../register/phases/operator.ts";
import { outboundChecks, outboundPeer } from "../register/phases/outbound-peer.ts";
import { apiEndpoint, loadNrConfig, type NrPaths } from "./home.ts";
import { K3S_KUBECONFIG } from "./register.ts";
import { findInstalledTool } from "./tools.ts";

/** What `nr cluster status --live` found: each check of what the registration recorded, now. */
export interface LiveHealth {
  result: "pass" | "fail";
  checks: HealthCheck[];
  checkedAt: string;
}

export interface LiveOptions {
  paths: NrPaths;
  env: NodeJS.ProcessEnv;
  runner: ProcessRunner;
  redactor: Redactor;
  version: string;
  clock?: () => Date;
  transport?: Transport;
}

/**
 * The running machine's health, read-only: for each phase the registration completed, the
 * same checks its probe and the verify phase make (the k3s API and node, Calico, the node
 * Ready, Liqo, the ForeignCluster in both directions, the operator), and NodeRings' view of
 * the peering and offloading through GET requests only — nothing is posted, nothing changes.
 * A check that cannot be made (a tool missing, NodeRings unreachable) fails with the reason.
 */
export async function liveHealth(state: RunState, options: LiveOptions): Promise<LiveHealth> {
  const { paths, env, runner } = options;
  const done = (id: string) => state.phases[id]?.state === "done" || state.phases[id]?.state === "stale";
  const outputs = (id: string) => state.phases[id]?.outputs ?? {};
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const kube = { kubeconfig: text(state.meta.kubeconfig) ?? K3S_KUBECONFIG };
  const ctx = { runner, kube };
  const checks: HealthCheck[] = [];
  const guarded = async (id: string, make: () => Promise<HealthCheck[]>) => {
    try {
      checks.push(...(await make()));
    } catch (error) {
      checks.push(check(id, false, isUserError(error) ? error.message : String(error)));
    }
  };

  const node = text(outputs(k3s.id).nodeName);
  if (done(k3s.id) && node !== undefined) await guarded("k3s-api", () => k3sChecks(ctx, node));
  if (done(calico.id)) {
    await guarded("calico-ready", () => calicoChecks(ctx));
    if (node !== undefined) await guarded("node-ready", () => nodeReadyChecks(ctx, node));
  }
  if (done(liqo.id)) await guarded("liqo-installed", () => liqoChecks(ctx));
  const platform = text(outputs(outboundPeer.id).platformClusterId);
  if (done(outboundPeer.id) && platform !== undefined) {
    await guarded("liqo-foreign-cluster", () => outboundChecks(ctx, platform));
    if (state.phases["inbound-peering"]?.state === "done")
      await guarded("liqo-reverse-peering", () => reverseChecks(ctx, platform));
  }
  if (done(operator.id)) {
    const helm = await findInstalledTool("helm", { paths, runner, env });
    const operatorOut = outputs(operator.id);
    const [namespace, secretName] = (text(operatorOut.secret) ?? "proxmox-operator/proxmox-credentials").split("/");
    const operatorCtx: Pick<RegisterContext, "operator" | "kube" | "tools" | "helmEnv" | "runner"> = {
      ...ctx,
      helmEnv: isolatedToolEnv(join(paths.run, "helm")),
      operator: {
        release: text(operatorOut.release) ?? "proxmox-operator",
        namespace: namespace ?? "proxmox-operator",
        secretName: secretName ?? "proxmox-credentials",
      } as RegisterContext["operator"],
      tools: {
        helm: async () => {
          if (helm.path === undefined) throw new Error(`helm is not on this machine (${helm.found})`);
          return {
            tool: "helm",
            version: recorded(RecordedPins, state.meta.pins)?.versions.helm ?? "",
            action: "use",
            path: helm.path,
          };
        },
      } as unknown as RegisterContext["tools"],
    };
    await guarded("operator", () => operatorChecks(operatorCtx));
  }

  // NodeRings' view, by GET only.
  const agentId = text(outputs(agent.id).agentId);
  if (agentId !== undefined && done(outboundPeer.id)) {
    const config = await loadNrConfig(paths);
    const endpoint = apiEndpoint({ apiUrl: text(state.meta.api) }, config, env);
    if (endpoint.token !== undefined) options.redactor.add(endpoint.token, "the NodeRings API token");
    const api = createNodeRingsClient({
      baseUrl: endpoint.url,
      token: () => endpoint.token,
      userAgent: `nr/${options.version}`,
      timeoutMs: 10_000,
      retry: { limit: 1 },
      ...(options.transport === undefined ? {} : { transport: options.transport }),
    });
    if (state.phases["inbound-peering"]?.state === "done")
      await guarded("peering", () => peeringChecks({ api }, agentId));
    if (done(offloading.id)) {
      const namespaces = outputs(offloading.id).namespaces;
      await guarded("offloading", () =>
        offloadingChecks(
          { api, runner, kube },
          agentId,
          Array.isArray(namespaces) ? namespaces.filter((n): n is string => typeof n === "string") : undefined,
        ),
      );
    }
  }
  return {
    result: checks.some((entry) => entry.result === "fail") ? "fail" : "pass",
    checks,
    checkedAt: (options.clock ?? (() => new Date()))().toISOString(),
  };
}
