import { kubectlCall } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { action, exec, type PlanStep } from "@nodekit/plan";
import * as z from "zod";
import { displayPath } from "../../services/home.ts";
import { type InstallerDecision, installInstaller } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { check, conditionTrue, getObject, verdict, waitTarget } from "./common.ts";

/**
 * What the k3s installer takes from nr's environment beyond what every program gets
 * (PATH, HOME, the proxies: see @nodekit/process INHERITED_ENV): containerd's own proxy
 * settings, which the installer copies into k3s's service environment. Never K3S_* or
 * INSTALL_K3S_*: those would change what is installed behind the printed plan.
 */
const K3S_INSTALLER_ENV = ["CONTAINERD_HTTP_PROXY", "CONTAINERD_HTTPS_PROXY", "CONTAINERD_NO_PROXY"];

const K3sOutputs = z.strictObject({ nodeName: z.string().min(1), version: z.string() });

/** The verify phase's check of k3s, and the k3s phase's probe: the node it installed is Ready. */
export async function k3sChecks(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  nodeName: string,
): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, `node/${nodeName}`, "checking the node");
  if (!answer.found) return [check("k3s-node-ready", false, `node ${nodeName} is not in the cluster`)];
  const ready = conditionTrue(answer.stdout, "Ready");
  return [check("k3s-node-ready", ready, ready ? undefined : `node ${nodeName} is not Ready`)];
}

/** 3. k3s (NR-6): the pinned k3s without flannel and its network policy controller; the node Ready. */
export const k3s = registerPhase({
  id: "k3s",
  title: "k3s",
  description: "install the pinned k3s without flannel and its network policy controller; wait for the node Ready",
  needs: ["pins", "network", "kube", "tools", "wait", "host", "runner", "transport", "paths"],
  uses: { tools: ["k3sInstaller"] },
  outputs: K3sOutputs,
  inputs: (ctx) => ({ version: ctx.pins.pins.tools.k3s.version, network: { ...ctx.network } }),
  async observe(ctx): Promise<{ nodeName: string; installer: InstallerDecision }> {
    const facts = await ctx.host.facts();
    return { nodeName: facts.hostname, installer: await ctx.tools.k3sInstaller() };
  },
  plan(ctx, { observation: seen }) {
    const version = ctx.pins.pins.tools.k3s.version;
    const wait = waitTarget(ctx.kube, ctx.wait.seconds);
    const steps: PlanStep[] = [];
    const { installer } = seen;
    if (installer.action === "install") {
      steps.push(
        action(
          "install-installer",
          `download the k3s installer ${installer.artifact.url}, check sha256 ${installer.artifact.sha256}, install it as ${displayPath(installer.path)}${installer.passedOver === undefined ? "" : ` (${installer.passedOver})`}`,
          { mutates: true },
        ),
      );
    }
    steps.push(
      exec(
        {
          command: "sh",
          args: [
            installer.path,
            "server",
            "--flannel-backend=none",
            "--disable-network-policy",
            `--cluster-cidr=${ctx.network.podCidr}`,
            `--service-cidr=${ctx.network.serviceCidr}`,
            `--node-name=${seen.nodeName}`,
          ],
          env: { INSTALL_K3S_VERSION: version },
          // The installer copies these into k3s's service environment: containerd's way out.
          inheritEnv: K3S_INSTALLER_ENV,
        },
        { mutates: true, reads: [installer.path] },
      ),
      exec(kubectlCall(wait, ["wait", "--for=create", `node/${seen.nodeName}`, `--timeout=${ctx.wait.seconds}s`]), {
        mutates: false,
      }),
      exec(
        kubectlCall(wait, ["wait", "--for=condition=Ready", `node/${seen.nodeName}`, `--timeout=${ctx.wait.seconds}s`]),
        { mutates: false },
      ),
    );
    return steps;
  },
  actions: {
    "install-installer": async (ctx, _step, io) => {
      const { installer } = io.observation;
      if (installer.action === "install") {
        await installInstaller(installer, { paths: ctx.paths, transport: ctx.transport, signal: io.signal });
      }
    },
  },
  recorded: (ctx, { observation }) => ({ nodeName: observation.nodeName, version: ctx.pins.pins.tools.k3s.version }),
  preview: (_ctx, { observation }) => ({ nodeName: observation.nodeName }),
  probe: async (ctx, recorded) => verdict(await k3sChecks(ctx, recorded.nodeName)),
});
