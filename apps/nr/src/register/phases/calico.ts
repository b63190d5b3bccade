import { join } from "node:path";
import { crdEstablishedWaitArgs, kubectlCall } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { exec } from "@nodekit/plan";
import * as z from "zod";
import { calicoManifests, calicoResources } from "../../services/calico.ts";
import { displayPath } from "../../services/home.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { check, conditionTrue, getObject, verdict, waitTarget, writeFile, writeFileStep } from "./common.ts";
import { k3s } from "./k3s.ts";

/** The verify phase's check of Calico, and the Calico phase's probe: TigeraStatus `calico` is Available. */
export async function calicoChecks(ctx: Pick<RegisterContext, "runner" | "kube">): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, "tigerastatus/calico", "checking Calico");
  if (!answer.found) return [check("calico-ready", false, "Calico's TigeraStatus is not there")];
  const available = conditionTrue(answer.stdout, "Available");
  return [check("calico-ready", available, available ? undefined : "Calico is not Available")];
}

/**
 * 4. Calico (NR-7): the pinned Calico through the tigera operator, as the CNI; ready, and
 * with it the node (NotReady without a CNI until now).
 */
export const calico = registerPhase({
  id: "calico",
  title: "Calico",
  description:
    "install the pinned Calico through the tigera operator, IP pool = the pod CIDR; wait until it is ready, and the node with it",
  needs: ["pins", "network", "kube", "wait", "paths", "calicoManifests", "runner"],
  uses: {},
  outputs: z.strictObject({
    version: z.string(),
    podCidr: z.string(),
    /** Where the tigera operator manifests came from (a mirror's, or the release's): `nr cluster reset` deletes with them. */
    manifests: z.string().optional(),
  }),
  inputs: (ctx, prior) => ({
    version: ctx.pins.pins.tools.calico.version,
    podCidr: ctx.network.podCidr,
    manifests: ctx.calicoManifests,
    node: prior.require(k3s, "nodeName"),
  }),
  plan(ctx, { prior }) {
    const manifests = calicoManifests(ctx.calicoManifests, ctx.pins.pins.tools.calico.version);
    const file = join(ctx.paths.run, "calico-resources.json");
    const wait = waitTarget(ctx.kube, ctx.wait.seconds);
    const timeout = `--timeout=${ctx.wait.seconds}s`;
    return [
      exec(kubectlCall(ctx.kube, ["apply", "--server-side", "--force-conflicts", "-f", manifests.crds]), {
        mutates: true,
        reads: [manifests.crds],
      }),
      exec(kubectlCall(ctx.kube, ["apply", "--server-side", "--force-conflicts", "-f", manifests.operator]), {
        mutates: true,
        reads: [manifests.operator],
      }),
      // Two calls: kubectl's condition wait alone fails at once on a CRD just created (see the helper).
      ...crdEstablishedWaitArgs(
        ["crd/installations.operator.tigera.io", "crd/apiservers.operator.tigera.io"],
        `${ctx.wait.seconds}s`,
      ).map((args) => exec(kubectlCall(wait, args), { mutates: false })),
      writeFileStep(
        `write the Installation (IP pool ${ctx.network.podCidr}, VXLAN, Liqo's liqo.* interfaces skipped in address autodetection, container IP forwarding for k3s's ServiceLB) and the APIServer to ${displayPath(file)}`,
        file,
        calicoResources(ctx.network),
      ),
      exec(kubectlCall(ctx.kube, ["apply", "-f", file]), { mutates: true, reads: [file] }),
      exec(kubectlCall(wait, ["wait", "--for=create", "tigerastatus/calico", timeout]), { mutates: false }),
      exec(kubectlCall(wait, ["wait", "--for=condition=Available", "tigerastatus/calico", timeout]), {
        mutates: false,
      }),
      // The kubelet reports Ready once the CNI is there (calico-node wrote its config).
      exec(kubectlCall(wait, ["wait", "--for=condition=Ready", `node/${prior.require(k3s, "nodeName")}`, timeout]), {
        mutates: false,
      }),
    ];
  },
  actions: { "write-file": writeFile },
  recorded: (ctx) => ({
    version: ctx.pins.pins.tools.calico.version,
    podCidr: ctx.network.podCidr,
    manifests: ctx.calicoManifests,
  }),
  probe: async (ctx) => verdict(await calicoChecks(ctx)),
});
