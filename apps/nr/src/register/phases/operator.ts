import { helmCall, kubectlCall } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { action, type ExecStep, exec } from "@nodekit/plan";
import * as z from "zod";
import { base64, credentialsSecret } from "../../services/credentials.ts";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { check, getObject, installToolAction, toolSteps, verdict } from "./common.ts";

const HelmStatus = z.object({ info: z.object({ status: z.string().optional() }).optional() });

/**
 * The verify phase's check of the operator, and the operator phase's probe: its helm
 * release is deployed, and the Secret it reads the credentials from is there.
 */
export async function operatorChecks(
  ctx: Pick<RegisterContext, "operator" | "kube" | "tools" | "helmEnv" | "runner">,
): Promise<HealthCheck[]> {
  const helm = await ctx.tools.helm();
  const { release, namespace, secretName } = ctx.operator;
  const result = await ctx.runner.run(
    {
      ...helmCall(ctx.kube, ["status", release, "--namespace", namespace, "-o", "json"], ctx.helmEnv),
      command: helm.path,
    },
    { allowFailure: true },
  );
  const status = result.exitCode === 0 ? HelmStatus.parse(JSON.parse(result.stdout)).info?.status : undefined;
  const secret = await getObject(ctx, `secret/${secretName}`, "checking the credentials Secret", "name", namespace);
  return [
    check("operator", status === "deployed", `helm release ${release}: ${status ?? "not installed"}`),
    check("operator-credentials", secret.found, secret.found ? undefined : `no Secret ${namespace}/${secretName}`),
  ];
}

/**
 * `helm upgrade --install` of the pinned operator chart, naming the credentials Secret (the
 * credentials never pass through Helm values): the operator phase's install, and
 * `nr cluster upgrade`'s in-place upgrade of the release.
 */
export function operatorHelmStep(
  ctx: Pick<RegisterContext, "operator" | "kube" | "helmEnv" | "wait">,
  helm: string,
): ExecStep {
  const { operator: op } = ctx;
  const upgrade = helmCall(
    ctx.kube,
    [
      "upgrade",
      "--install",
      op.release,
      op.chart,
      "--version",
      op.version,
      "--namespace",
      op.namespace,
      "--create-namespace",
      "--set",
      `credentials.existingSecret=${op.secretName}`,
      "--wait",
      "--timeout",
      `${ctx.wait.seconds}s`,
    ],
    ctx.helmEnv,
  );
  return exec(
    { ...upgrade, command: helm },
    { mutates: true, ...(op.chart.includes("://") ? {} : { reads: [op.chart] }) },
  );
}

/** 9. Operator (NR-12): the Proxmox credentials Secret, then the pinned proxmox-operator chart referencing it. */
export const operator = registerPhase({
  id: "operator",
  title: "Operator",
  description:
    "create the Proxmox credentials Secret, then helm-install the pinned proxmox-operator referencing it (optional: --skip-operator-install)",
  needs: [
    "operator",
    "kube",
    "tools",
    "helmEnv",
    "wait",
    "runner",
    "transport",
    "onDownload",
    "onInstalled",
    "redactor",
    "paths",
  ],
  uses: { tools: ["helm"], secrets: ["proxmox"] },
  outputs: z.strictObject({
    secret: z.string(),
    release: z.string(),
    version: z.string(),
    /** Where helm was installed, when this phase installed it. */
    installed: z.string().optional(),
  }),
  guard: (ctx) =>
    ctx.operator.skip ? "--skip-operator-install: VMs cannot be sold until the operator runs" : undefined,
  inputs: (ctx) => ({
    chart: ctx.operator.chart,
    version: ctx.operator.version,
    namespace: ctx.operator.namespace,
    release: ctx.operator.release,
    secret: ctx.operator.secretName,
  }),
  observe: async (ctx): Promise<{ helm: ToolDecision }> => ({ helm: await ctx.tools.helm() }),
  plan(ctx, { observation: { helm } }) {
    const { operator: op } = ctx;
    return [
      ...toolSteps(helm, "helm"),
      action(
        "create-credentials-secret",
        `create Secret ${op.namespace}/${op.secretName} with the Proxmox credentials (from the ${op.credentialsSource}) in this cluster, applied server-side (no last-applied-configuration copy): they go nowhere else`,
        { mutates: true, params: { namespace: op.namespace, name: op.secretName } },
      ),
      operatorHelmStep(ctx, helm.path),
    ];
  },
  actions: {
    "install-tool": async (ctx, _step, io) => installToolAction(ctx, io.observation.helm, io),
    "create-credentials-secret": async (ctx, _step, io) => {
      const credentials = await ctx.operator.credentials();
      ctx.redactor.add(credentials.tokenSecret, "the Proxmox token secret");
      ctx.redactor.add(base64(credentials.tokenSecret), "the Proxmox token secret");
      const { namespace, secretName } = ctx.operator;
      // Through stdin: the secret is in no argument, no file, no log line. Server-side: no
      // last-applied-configuration annotation keeps a copy of it.
      await ctx.runner.run(
        kubectlCall(ctx.kube, ["apply", "--server-side", "--field-manager=nr", "--force-conflicts", "-f", "-"], {
          input: credentialsSecret(credentials, namespace, secretName),
        }),
      );
      // The copy a client-side apply of an earlier nr left there (a no-op when there is none).
      await ctx.runner.run(
        kubectlCall(ctx.kube, [
          "annotate",
          `secret/${secretName}`,
          "-n",
          namespace,
          "kubectl.kubernetes.io/last-applied-configuration-",
        ]),
      );
      io.set("secret", `${ctx.operator.namespace}/${ctx.operator.secretName}`);
      io.set("release", ctx.operator.release);
      io.set("version", ctx.operator.version);
    },
  },
  probe: async (ctx) => verdict(await operatorChecks(ctx)),
});
