import { constants } from "node:fs";
import { access, mkdir, rename, rm } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { isUserError } from "@nodekit/errors";
import { helmCall, kubectlCall } from "@nodekit/kube";
import { nodeRingsErrorCodes, renderPeeringKubeconfig } from "@nodekit/noderings-api";
import { action, exec, type PlanStep } from "@nodekit/plan";
import * as z from "zod";
import { writeRunFile } from "../register/phases/common.ts";
import { calicoManifests } from "../services/calico.ts";
import { displayPath } from "../services/home.ts";
import { type ResetContext, type ResetPhase, resetPhase } from "./context.ts";

// The phases of `nr cluster reset`: register's, reversed (kubeadm reset, k0sctl reset), each
// removing only what the registration recorded that nr created (reset/recorded.ts), each
// checkpointed in ~/.nr/reset-state.json as register's are in state.json.

/** The one-time kubeconfigs of the two `liqoctl unpeer` calls, in `run/`: they never outlive the phase. */
export const TEARDOWN_PEERING_KUBECONFIG = "noderings-unpeer.kubeconfig";
export const TEARDOWN_CONSUMER_KUBECONFIG = "noderings-unpeer-consumer.kubeconfig";

/** The NodeRings failures `--force` goes past (as its code: the phase runner re-throws the error). */
export const UNREACHABLE: readonly string[] = [
  nodeRingsErrorCodes.NODERINGS_UNREACHABLE.code,
  nodeRingsErrorCodes.NODERINGS_TIMEOUT.code,
  nodeRingsErrorCodes.NODERINGS_SERVER_ERROR.code,
  nodeRingsErrorCodes.NODERINGS_BAD_RESPONSE.code,
];

/**
 * Whether NodeRings answers for this agent. Unreachable is `false` with `--force` (only this
 * machine's side is then removed); without it, the client's error (the command adds the way out).
 */
async function reachNodeRings(ctx: Pick<ResetContext, "api" | "force">, agentId: string): Promise<boolean> {
  try {
    await ctx.api.getPeeringStatus(agentId);
    return true;
  } catch (error) {
    if (!isUserError(error) || !UNREACHABLE.includes(error.code) || !ctx.force) throw error;
    return false;
  }
}

const notRecorded = (what: string, phase: string) =>
  `nr did not ${what} on this machine (the registration's ${phase} phase has not completed)`;

/** 1. Unoffload: every namespace the registration offloaded. */
const unoffload = resetPhase({
  id: "unoffload",
  title: "Unoffload",
  description: "unoffload each namespace the registration offloaded (liqoctl unoffload namespace)",
  needs: ["recorded", "kube", "tools"],
  outputs: z.strictObject({ namespaces: z.array(z.string()) }),
  guard: (ctx) =>
    (ctx.recorded.offloaded ?? []).length === 0 || ctx.recorded.liqo === undefined
      ? notRecorded("offload a namespace", "offloading")
      : undefined,
  inputs: (ctx) => ({ namespaces: ctx.recorded.offloaded ?? [] }),
  observe: async (ctx): Promise<{ liqoctl: string }> => ({ liqoctl: await ctx.tools.liqoctl() }),
  plan: (ctx, { observation: { liqoctl } }) =>
    (ctx.recorded.offloaded ?? []).map((namespace) =>
      exec(
        {
          command: liqoctl,
          args: ["unoffload", "namespace", namespace, "--kubeconfig", ctx.kube.kubeconfig, "--skip-confirm"],
        },
        { mutates: true },
      ),
    ),
  recorded: (ctx) => ({ namespaces: ctx.recorded.offloaded ?? [] }),
});

/**
 * 2. Namespaces: delete those the offloading created (it labelled them
 * app.kubernetes.io/managed-by=nr and recorded them), now that they are unoffloaded and while
 * Liqo still runs to release them. One that existed before the registration is never deleted.
 */
const deleteNamespaces = resetPhase({
  id: "namespaces",
  title: "Namespaces",
  description: "delete the namespaces the offloading created (one that existed before the registration is kept)",
  needs: ["recorded", "kube", "wait"],
  outputs: z.strictObject({ namespaces: z.array(z.string()) }),
  guard: (ctx) =>
    ctx.recorded.createdNamespaces === undefined
      ? (ctx.recorded.offloaded ?? []).length === 0
        ? notRecorded("create a namespace", "offloading")
        : "the registration did not record which namespaces it created (an older nr): every offloaded namespace is kept"
      : ctx.recorded.createdNamespaces.length === 0
        ? "every namespace the registration offloaded existed before it: all are kept"
        : undefined,
  inputs: (ctx) => ({ namespaces: ctx.recorded.createdNamespaces ?? [] }),
  plan: (ctx) => [
    exec(
      kubectlCall(ctx.kube, [
        "delete",
        "namespace",
        ...(ctx.recorded.createdNamespaces ?? []),
        "--ignore-not-found",
        `--timeout=${ctx.wait.seconds}s`,
      ]),
      { mutates: true },
    ),
  ],
  recorded: (ctx) => ({ namespaces: ctx.recorded.createdNamespaces ?? [] }),
});

/** NodeRings' answer for the unpeer phase: reachable (the two unpeer calls) or not (--force: this side only). */
interface UnpeerObservation {
  liqoctl: string;
  reachable: boolean;
}

/**
 * 3. Unpeer both directions. A Liqo peering is one-way and `liqoctl unpeer` needs the
 * kubeconfigs of both clusters, as `liqoctl peer` did (liqotech/liqo@v1.0.1 docs/usage/peer.md
 * §"Tear down"): NodeRings issues a one-time consumer credential and peering user again, and
 * nr unpeers the reverse direction (NodeRings the consumer), then the outbound one. With
 * `--force` and NodeRings unreachable, this side's peering resources (the virtual node, the
 * tenant namespace, the ForeignCluster) are deleted instead; NodeRings keeps its side.
 */
const unpeer = resetPhase({
  id: "unpeer",
  title: "Unpeer",
  description:
    "unpeer both directions with one-time credentials NodeRings issues (--force: NodeRings unreachable, delete this side's peering resources only)",
  needs: ["recorded", "kube", "tools", "api", "force", "paths", "redactor"],
  outputs: z.strictObject({ noderings: z.enum(["unpeered", "left"]) }),
  guard: (ctx) =>
    ctx.recorded.outbound === undefined || ctx.recorded.agent === undefined || ctx.recorded.liqo === undefined
      ? notRecorded("peer", "outbound-peer")
      : undefined,
  inputs: (ctx) => ({
    agentId: ctx.recorded.agent?.agentId ?? null,
    platformClusterId: ctx.recorded.outbound?.platformClusterId ?? null,
    inbound: ctx.recorded.inbound,
  }),
  async observe(ctx): Promise<UnpeerObservation> {
    const liqoctl = await ctx.tools.liqoctl();
    return { liqoctl, reachable: await reachNodeRings(ctx, ctx.recorded.agent?.agentId ?? "") };
  },
  plan(ctx, { observation: { liqoctl, reachable } }) {
    const platform = ctx.recorded.outbound?.platformClusterId ?? "";
    const kubeconfig = ctx.kube.kubeconfig;
    if (!reachable) {
      return [
        exec(kubectlCall(ctx.kube, ["delete", `node/${platform}`, "--ignore-not-found"]), { mutates: true }),
        exec(kubectlCall(ctx.kube, ["delete", "namespace", `liqo-tenant-${platform}`, "--ignore-not-found"]), {
          mutates: true,
        }),
        exec(kubectlCall(ctx.kube, ["delete", `foreignclusters.core.liqo.io/${platform}`, "--ignore-not-found"]), {
          mutates: true,
        }),
        action(
          "note-left",
          `--force: NodeRings is unreachable; it keeps the agent's peering until it is removed there`,
          { mutates: false },
        ),
      ];
    }
    const peeringFile = join(ctx.paths.run, TEARDOWN_PEERING_KUBECONFIG);
    const consumerFile = join(ctx.paths.run, TEARDOWN_CONSUMER_KUBECONFIG);
    return [
      action(
        "start-teardown",
        `ask NodeRings to tear the peering down: it issues a one-time consumer credential and peering user for its own cluster, written to ${displayPath(consumerFile)} and ${displayPath(peeringFile)} (0600); nothing of this cluster's is sent`,
        { mutates: true, params: { peeringFile, consumerFile } },
      ),
      ...(ctx.recorded.inbound
        ? [
            exec(
              {
                command: liqoctl,
                args: ["unpeer", "--kubeconfig", consumerFile, "--remote-kubeconfig", kubeconfig, "--skip-confirm"],
              },
              { mutates: true, reads: [consumerFile, kubeconfig] },
            ),
          ]
        : []),
      exec(
        {
          command: liqoctl,
          args: ["unpeer", "--kubeconfig", kubeconfig, "--remote-kubeconfig", peeringFile, "--skip-confirm"],
        },
        { mutates: true, reads: [peeringFile] },
      ),
      action("remove-files", "remove both one-time kubeconfigs", { mutates: true }),
      action("complete-teardown", "tell NodeRings both directions are unpeered", { mutates: true }),
    ];
  },
  actions: {
    "start-teardown": async (ctx, _step, io) => {
      const agent = ctx.recorded.agent;
      if (agent === undefined) return;
      const teardown = await ctx.api.startPeeringTeardown(agent.agentId, { clusterId: agent.clusterId });
      ctx.redactor.add(teardown.peeringUser.token, "NodeRings' one-time peering user");
      ctx.redactor.add(teardown.consumerUser.token, "NodeRings' one-time consumer credential");
      await writeRunFile(
        ctx.paths,
        join(ctx.paths.run, TEARDOWN_PEERING_KUBECONFIG),
        renderPeeringKubeconfig(teardown.peeringUser),
      );
      await writeRunFile(
        ctx.paths,
        join(ctx.paths.run, TEARDOWN_CONSUMER_KUBECONFIG),
        renderPeeringKubeconfig(teardown.consumerUser),
      );
      io.report("one-time credentials written");
    },
    "remove-files": async (ctx) => removeTeardownFiles(ctx),
    "complete-teardown": async (ctx, _step, io) => {
      const agent = ctx.recorded.agent;
      if (agent !== undefined) await ctx.api.completePeeringTeardown(agent.agentId, { clusterId: agent.clusterId });
      io.set("noderings", "unpeered");
    },
    "note-left": async (_ctx, _step, io) => {
      io.set("noderings", "left");
    },
  },
  cleanup: async (ctx) => removeTeardownFiles(ctx),
});

async function removeTeardownFiles(ctx: Pick<ResetContext, "paths">): Promise<void> {
  await rm(join(ctx.paths.run, TEARDOWN_PEERING_KUBECONFIG), { force: true });
  await rm(join(ctx.paths.run, TEARDOWN_CONSUMER_KUBECONFIG), { force: true });
}

/** 4. Liqo: `liqoctl uninstall --purge` (its CRDs and namespaces too). */
const uninstallLiqo = resetPhase({
  id: "liqo",
  title: "Liqo",
  description: "uninstall Liqo with liqoctl uninstall --purge (its CRDs too)",
  needs: ["recorded", "kube", "tools"],
  guard: (ctx) => (ctx.recorded.liqo === undefined ? notRecorded("install Liqo", "liqo") : undefined),
  inputs: (ctx) => ({ version: ctx.recorded.liqo?.version ?? null }),
  observe: async (ctx): Promise<{ liqoctl: string }> => ({ liqoctl: await ctx.tools.liqoctl() }),
  plan: (ctx, { observation: { liqoctl } }) => [
    exec(
      { command: liqoctl, args: ["uninstall", "--purge", "--kubeconfig", ctx.kube.kubeconfig, "--skip-confirm"] },
      { mutates: true },
    ),
  ],
});

/** 5. The operator: its helm release, the credentials Secret, and the namespace nr created for them. */
const uninstallOperator = resetPhase({
  id: "operator",
  title: "Operator",
  description: "helm-uninstall the proxmox-operator release, delete the credentials Secret and its namespace",
  needs: ["recorded", "kube", "tools", "helmEnv", "wait"],
  guard: (ctx) => (ctx.recorded.operator === undefined ? notRecorded("install the operator", "operator") : undefined),
  inputs: (ctx) => ({ ...(ctx.recorded.operator ?? {}) }),
  observe: async (ctx): Promise<{ helm: string }> => ({ helm: await ctx.tools.helm() }),
  plan(ctx, { observation: { helm } }) {
    const op = ctx.recorded.operator;
    if (op === undefined) return [];
    return [
      exec(
        {
          ...helmCall(
            ctx.kube,
            [
              "uninstall",
              op.release,
              "--namespace",
              op.namespace,
              "--ignore-not-found",
              "--wait",
              "--timeout",
              `${ctx.wait.seconds}s`,
            ],
            ctx.helmEnv,
          ),
          command: helm,
        },
        { mutates: true },
      ),
      exec(kubectlCall(ctx.kube, ["delete", "secret", op.secret, "-n", op.namespace, "--ignore-not-found"]), {
        mutates: true,
      }),
      exec(kubectlCall(ctx.kube, ["delete", "namespace", op.namespace, "--ignore-not-found"]), { mutates: true }),
    ];
  },
});

/** 6. Calico: the Installation and APIServer nr wrote, then the tigera operator and its CRDs. */
const uninstallCalico = resetPhase({
  id: "calico",
  title: "Calico",
  description: "delete the Installation and APIServer, then the tigera operator and its CRDs",
  needs: ["recorded", "kube", "calicoManifests", "wait"],
  guard: (ctx) => (ctx.recorded.calico === undefined ? notRecorded("install Calico", "calico") : undefined),
  inputs: (ctx) => ({ version: ctx.recorded.calico?.version ?? null, manifests: ctx.calicoManifests }),
  plan(ctx) {
    const manifests = calicoManifests(ctx.calicoManifests, ctx.recorded.calico?.version ?? "");
    const timeout = `--timeout=${ctx.wait.seconds}s`;
    return [
      exec(
        kubectlCall(ctx.kube, [
          "delete",
          "installations.operator.tigera.io/default",
          "apiservers.operator.tigera.io/default",
          "--ignore-not-found",
          timeout,
        ]),
        { mutates: true },
      ),
      exec(kubectlCall(ctx.kube, ["delete", "-f", manifests.operator, "--ignore-not-found", timeout]), {
        mutates: true,
        reads: [manifests.operator],
      }),
      exec(kubectlCall(ctx.kube, ["delete", "-f", manifests.crds, "--ignore-not-found", timeout]), {
        mutates: true,
        reads: [manifests.crds],
      }),
    ];
  },
});

/** The k3s uninstaller the installer wrote (install.sh: `${BIN_DIR}/k3s-uninstall.sh`), on PATH. */
async function findUninstaller(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "k3s-uninstall.sh");
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** 7. k3s: `k3s-uninstall.sh`, which the installer wrote; nothing when it is gone already. */
const uninstallK3s = resetPhase({
  id: "k3s",
  title: "k3s",
  description: "run k3s-uninstall.sh, which the k3s installer wrote (k3s, its data and its CNI state go)",
  needs: ["recorded", "env"],
  outputs: z.strictObject({ uninstaller: z.string() }),
  guard: (ctx) => (ctx.recorded.k3s === undefined ? notRecorded("install k3s", "k3s") : undefined),
  inputs: (ctx) => ({ node: ctx.recorded.k3s?.nodeName ?? null }),
  observe: async (ctx): Promise<{ uninstaller: string | undefined }> => ({
    uninstaller: await findUninstaller(ctx.env),
  }),
  plan(_ctx, { observation: { uninstaller } }): PlanStep[] {
    if (uninstaller === undefined) {
      return [action("note-gone", "k3s-uninstall.sh is not on PATH: k3s was uninstalled already", { mutates: false })];
    }
    return [exec({ command: uninstaller, args: [] }, { mutates: true })];
  },
  recorded: (_ctx, { observation }) => ({ uninstaller: observation.uninstaller ?? "gone" }),
  actions: { "note-gone": async () => {} },
});

/** 8. Deregister the agent in NodeRings: only one the registration created (a reused one is kept). */
const deregister = resetPhase({
  id: "deregister",
  title: "Deregister",
  description:
    "delete the agent in NodeRings, when the registration created it (--force: NodeRings unreachable, left there)",
  needs: ["recorded", "api", "force"],
  outputs: z.strictObject({ noderings: z.enum(["deleted", "gone", "left"]) }),
  guard: (ctx) =>
    ctx.recorded.agent === undefined
      ? notRecorded("create an agent", "agent")
      : ctx.recorded.agent.created
        ? undefined
        : `agent ${ctx.recorded.agent.name} existed before this machine registered: it is kept in NodeRings`,
  inputs: (ctx) => ({ agentId: ctx.recorded.agent?.agentId ?? null }),
  async observe(ctx): Promise<{ reachable: boolean }> {
    const id = ctx.recorded.agent?.agentId ?? "";
    try {
      await ctx.api.getAgent(id);
      return { reachable: true };
    } catch (error) {
      // Gone already: a reset resumed after it deleted the agent.
      if (isUserError(error) && error.errorCode === nodeRingsErrorCodes.NODERINGS_NOT_FOUND) return { reachable: true };
      return { reachable: await reachNodeRings(ctx, id) };
    }
  },
  plan(ctx, { observation: { reachable } }) {
    const agent = ctx.recorded.agent;
    return reachable
      ? [
          action("delete-agent", `delete agent ${agent?.name} (${agent?.agentId}) in NodeRings`, {
            mutates: true,
          }),
        ]
      : [
          action(
            "note-left",
            `--force: NodeRings is unreachable; agent ${agent?.name} (${agent?.agentId}) is left there: delete it there`,
            { mutates: false },
          ),
        ];
  },
  actions: {
    "delete-agent": async (ctx, _step, io) => {
      try {
        await ctx.api.deleteAgent(ctx.recorded.agent?.agentId ?? "");
        io.set("noderings", "deleted");
      } catch (error) {
        if (!isUserError(error) || error.errorCode !== nodeRingsErrorCodes.NODERINGS_NOT_FOUND) throw error;
        io.set("noderings", "gone");
      }
    },
    "note-left": async (_ctx, _step, io) => {
      io.set("noderings", "left");
    },
  },
});

/** 9. Archive the registration's state: a later `nr cluster register` starts afresh; nothing is deleted. */
const archive = resetPhase({
  id: "archive",
  title: "Archive",
  description: "move the registration's state into ~/.nr/archive/<time>/ (a later register starts afresh)",
  needs: ["recorded", "archiveDir"],
  outputs: z.strictObject({ archive: z.string() }),
  inputs: (ctx) => ({ archive: ctx.archiveDir }),
  plan: (ctx) => [
    action(
      "archive-state",
      `move ${displayPath(ctx.recorded.stateFile)} to ${displayPath(join(ctx.archiveDir, "state.json"))}`,
      { mutates: true },
    ),
  ],
  actions: {
    "archive-state": async (ctx, _step, io) => {
      await mkdir(ctx.archiveDir, { recursive: true, mode: 0o700 });
      try {
        await rename(ctx.recorded.stateFile, join(ctx.archiveDir, "state.json"));
      } catch (error) {
        // Moved already: a reset resumed after this step.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      io.set("archive", ctx.archiveDir);
    },
  },
});

/** The phases of `nr cluster reset`, in order: register's, reversed. */
export const RESET_PHASES: readonly ResetPhase<unknown>[] = [
  unoffload,
  deleteNamespaces,
  unpeer,
  uninstallLiqo,
  uninstallOperator,
  uninstallCalico,
  uninstallK3s,
  deregister,
  archive,
];
