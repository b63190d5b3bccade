import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import { kubectlCall, runKubeStrict } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { action, exec } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import { displayPath } from "../../services/home.ts";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, getObject, placeholder, verdict, writeRunFile } from "./common.ts";

/** One namespace to offload, with the strategies NodeRings asks for. */
interface OffloadTarget {
  name: string;
  pod: string;
  mapping: string;
  required: boolean;
}

/** liqoctl, and the namespaces to offload (placeholders for NodeRings' before the agent exists: a dry run). */
interface OffloadingObservation {
  liqoctl: ToolDecision;
  namespaces: OffloadTarget[];
}

/**
 * The label on each namespace the offloading creates: what tells, on a resumed run, a namespace
 * nr created (and `nr cluster reset` deletes) from one that was there before (kept).
 */
const MANAGED_BY = { key: "app.kubernetes.io/managed-by", value: "nr" } as const;

const NamespaceLabels = z.object({
  metadata: z.object({ labels: z.record(z.string(), z.string()).optional() }).optional(),
});

/**
 * Creates each namespace to offload that does not exist yet, labelled {@link MANAGED_BY}
 * (`kubectl create`: one made in between fails rather than being taken over), and returns the
 * ones nr created: those just created and those an earlier run of this phase created (the
 * label). A namespace that was there without the label is left as it is, and not returned.
 */
async function createNamespaces(
  ctx: Pick<RegisterContext, "runner" | "kube" | "paths">,
  names: readonly string[],
): Promise<string[]> {
  const missing: string[] = [];
  const ours: string[] = [];
  for (const name of names) {
    const answer = await getObject(ctx, `namespace/${name}`, "looking for the namespaces to offload");
    if (!answer.found) missing.push(name);
    else if (NamespaceLabels.parse(JSON.parse(answer.stdout)).metadata?.labels?.[MANAGED_BY.key] === MANAGED_BY.value)
      ours.push(name);
  }
  if (missing.length > 0) {
    const file = join(ctx.paths.run, "offloaded-namespaces.json");
    const manifest = {
      apiVersion: "v1",
      kind: "List",
      items: missing.map((name) => ({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: { [MANAGED_BY.key]: MANAGED_BY.value } },
      })),
    };
    await writeRunFile(ctx.paths, file, `${JSON.stringify(manifest, null, 2)}\n`);
    await runKubeStrict(ctx.runner, kubectlCall(ctx.kube, ["create", "-f", file]), {
      doing: "creating the namespaces to offload",
      kubeconfig: ctx.kube.kubeconfig,
      cluster: "the agent cluster",
    });
  }
  return names.filter((name) => missing.includes(name) || ours.includes(name));
}

const NamespaceOffloading = z.object({
  status: z.object({ offloadingPhase: z.string().optional() }).optional(),
});

/**
 * The verify phase's check of offloading, and the offloading phase's probe: on this cluster,
 * each namespace's NamespaceOffloading (`liqoctl offload namespace` creates it) reports phase
 * Ready (liqotech/liqo@v1.0.1 docs/usage/namespace-offloading.md; NoClusterSelected, InProgress,
 * SomeFailed, AllFailed or Terminating otherwise) — judged here, not on NodeRings' word — and
 * NodeRings lists each as offloaded (it sends VM orders only there). The namespaces are those
 * recorded; without a record, the ones NodeRings requires.
 */
export async function offloadingChecks(
  ctx: Pick<RegisterContext, "api" | "runner" | "kube">,
  agentId: string,
  recorded: readonly string[] | undefined,
): Promise<HealthCheck[]> {
  const targets = await ctx.api.getOffloadingTargets(agentId);
  const wanted = recorded ?? targets.required.map((ns) => ns.name);
  const here: string[] = [];
  for (const name of wanted) {
    const answer = await getObject(
      ctx,
      "namespaceoffloadings.offloading.liqo.io/offloading",
      "checking the offloading",
      "json",
      name,
    );
    const phase = answer.found
      ? (NamespaceOffloading.parse(JSON.parse(answer.stdout)).status?.offloadingPhase ?? "no phase")
      : "no NamespaceOffloading";
    if (phase !== "Ready") here.push(`${name} (${phase})`);
  }
  const unreported = wanted.filter((name) => !targets.offloaded.includes(name));
  return [
    check(
      "offloading",
      here.length === 0,
      here.length === 0 ? `offloaded: ${wanted.join(", ")}` : `not offloaded on this cluster: ${here.join(", ")}`,
    ),
    check(
      "offloading-reported",
      unreported.length === 0,
      unreported.length === 0 ? undefined : `NodeRings does not list ${unreported.join(", ")} as offloaded`,
    ),
  ];
}

/** 7. Offloading (NR-10): the VNC gateway namespace, and the optional ones named. */
export const offloading = registerPhase({
  id: "offloading",
  title: "Offloading",
  description: "offload the VNC gateway namespace, and each --offload-namespace",
  needs: ["api", "kube", "tools", "offload", "paths", "runner"],
  uses: { tools: ["liqoctl"] },
  outputs: z.strictObject({
    namespaces: z.array(z.string()),
    /** The namespaces nr created (labelled {@link MANAGED_BY}): `nr cluster reset` deletes these, and no other. */
    created: z.array(z.string()).optional(),
  }),
  inputs: (ctx, prior) => ({ agentId: prior.known(agent, "agentId") ?? null, optional: [...ctx.offload].sort() }),
  async observe(ctx, prior): Promise<OffloadingObservation> {
    const liqoctl = await ctx.tools.liqoctl();
    const id = prior.known(agent, "agentId");
    if (id === undefined) {
      const unknown = { pod: placeholder("strategy"), mapping: placeholder("strategy") };
      return {
        liqoctl,
        namespaces: [
          { name: placeholder("required namespaces from NodeRings"), ...unknown, required: true },
          ...ctx.offload.map((name) => ({ name, ...unknown, required: false })),
        ],
      };
    }
    const targets = await ctx.api.getOffloadingTargets(id);
    const refused = ctx.offload.filter((name) => targets.optional.forbidden.includes(name));
    if (refused.length > 0 || ctx.offload.length > targets.optional.max) {
      throw new UserError(
        errorCodes.OFFLOAD_NAMESPACE_REFUSED,
        refused.length > 0
          ? `NodeRings does not allow offloading ${refused.join(", ")}`
          : `NodeRings allows at most ${targets.optional.max} optional namespaces; ${ctx.offload.length} were given`,
        {
          why: `the namespaces it never offloads are ${targets.optional.forbidden.join(", ")}`,
          next: "leave those out of --offload-namespace",
        },
      );
    }
    const required = targets.required.map((ns) => ({
      name: ns.name,
      pod: ns.podOffloadingStrategy,
      mapping: ns.namespaceMappingStrategy,
      required: true,
    }));
    const optional = ctx.offload
      .filter((name) => !required.some((ns) => ns.name === name))
      .map((name) => ({
        name,
        pod: targets.optional.podOffloadingStrategy,
        mapping: targets.optional.namespaceMappingStrategy,
        required: false,
      }));
    return { liqoctl, namespaces: [...required, ...optional] };
  },
  plan(ctx, { observation: { liqoctl, namespaces } }) {
    const file = join(ctx.paths.run, "offloaded-namespaces.json");
    const names = namespaces.map((ns) => ns.name);
    return [
      action(
        "create-namespaces",
        `create each namespace to offload (${names.join(", ")}) that does not exist yet, labelled ${MANAGED_BY.key}=${MANAGED_BY.value} (kubectl create -f ${displayPath(file)}); one that exists is left as it is, and a reset keeps it`,
        { mutates: true },
      ),
      ...namespaces.map((ns) =>
        exec(
          {
            command: liqoctl.path,
            args: [
              "offload",
              "namespace",
              ns.name,
              "--kubeconfig",
              ctx.kube.kubeconfig,
              "--pod-offloading-strategy",
              ns.pod,
              "--namespace-mapping-strategy",
              ns.mapping,
              "--skip-confirm",
            ],
          },
          { mutates: true },
        ),
      ),
      action("report-offloading", `tell NodeRings which namespaces are offloaded: ${names.join(", ")}`, {
        mutates: true,
        params: { namespaces: names },
      }),
    ];
  },
  actions: {
    "create-namespaces": async (ctx, _step, io) => {
      const created = await createNamespaces(
        ctx,
        io.observation.namespaces.map((ns) => ns.name),
      );
      io.set("created", created);
      io.report(
        created.length === 0 ? "every namespace existed: none created" : `created by nr: ${created.join(", ")}`,
      );
    },
    "report-offloading": async (ctx, _step, io) => {
      const namespaces = io.observation.namespaces.map((ns) => ns.name);
      await ctx.api.reportOffloading(io.prior.require(agent, "agentId"), { namespaces });
      io.set("namespaces", namespaces);
    },
  },
  probe: async (ctx, recorded, prior) =>
    verdict(await offloadingChecks(ctx, prior.require(agent, "agentId"), recorded.namespaces)),
});
