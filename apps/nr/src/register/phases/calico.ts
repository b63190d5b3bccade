import { join } from "node:path";
import { kubectlCall } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { exec } from "@nodekit/plan";
import * as z from "zod";
import { calicoManifests, calicoResources } from "../../services/calico.ts";
import { displayPath } from "../../services/home.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { check, conditionTrue, getObject, verdict, waitTarget, writeFile, writeFileStep } from "./common.ts";

/** The verify phase's check of Calico, and the Calico phase's probe: TigeraStatus `calico` is Available. */
export async function calicoChecks(ctx: Pick<RegisterContext, "runner" | "kube">): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, "tigerastatus/calico", "checking Calico");
  if (!answer.found) return [check("calico-ready", false, "Calico's TigeraStatus is not there")];
  const available = conditionTrue(answer.stdout, "Available");
  return [check("calico-ready", available, available ? undefined : "Calico is not Available")];
}

/** 4. Calico (NR-7): the pinned Calico through the tigera operator, as the CNI; ready. */
export const calico = registerPhase({
  id: "calico",
  title: "Calico",
  description: "install the pinned Calico through the tigera operator, IP pool = the pod CIDR; wait until ready",
  needs: ["pins", "network", "kube", "wait", "paths", "calicoManifests", "runner"],
  uses: {},
  outputs: z.strictObject({ version: z.string(), podCidr: z.string() }),
  inputs: (ctx) => ({
    version: ctx.pins.pins.tools.calico.version,
    podCidr: ctx.network.podCidr,
    manifests: ctx.calicoManifests,
  }),
  plan(ctx) {
    const manifests = calicoManifests(ctx.calicoManifests);
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
      exec(
        kubectlCall(wait, [
          "wait",
          "--for=condition=Established",
          "crd/installations.operator.tigera.io",
          "crd/apiservers.operator.tigera.io",
          timeout,
        ]),
        { mutates: false },
      ),
      writeFileStep(
        `write the Installation (IP pool ${ctx.network.podCidr}, VXLAN, Liqo's liqo.* interfaces skipped in address autodetection) and the APIServer to ${displayPath(file)}`,
        file,
        calicoResources(ctx.network),
      ),
      exec(kubectlCall(ctx.kube, ["apply", "-f", file]), { mutates: true, reads: [file] }),
      exec(kubectlCall(wait, ["wait", "--for=create", "tigerastatus/calico", timeout]), { mutates: false }),
      exec(kubectlCall(wait, ["wait", "--for=condition=Available", "tigerastatus/calico", timeout]), {
        mutates: false,
      }),
    ];
  },
  actions: { "write-file": writeFile },
  recorded: (ctx) => ({ version: ctx.pins.pins.tools.calico.version, podCidr: ctx.network.podCidr }),
  probe: async (ctx) => verdict(await calicoChecks(ctx)),
});
