import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { BugError, UserError } from "@nodekit/errors";
import { helmCall, type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import { type CreateHealthReportRequest, type HealthCheck, renderPeeringKubeconfig } from "@nodekit/noderings-api";
import type { Phase, PhaseIo, PriorOutputs } from "@nodekit/phase-runner";
import { phase } from "@nodekit/phase-runner";
import { type ActionStep, action, exec, type JsonValue, type PlanStep } from "@nodekit/plan";
import { errorCodes } from "../errors.ts";
import { calicoManifests, calicoResources } from "../services/calico.ts";
import { credentialsSecret } from "../services/credentials.ts";
import { displayPath } from "../services/home.ts";
import { assessHost, type HostFacts, hostProblems, REQUIRED_PORTS, REQUIREMENTS } from "../services/host.ts";
import { installInstaller, installSummary, installTool, type ToolDecision } from "../services/tools.ts";
import type { RegisterContext } from "./context.ts";

const define = phase<RegisterContext>();

/** Written before each atomic file write of a run (manifests, the peering kubeconfig). */
async function writeRunFile(path: string, content: string, mode: number): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  const { default: writeFileAtomic } = await import("write-file-atomic");
  await writeFileAtomic(path, content, { mode });
}

/** The `write-file` action: a manifest nr hands to kubectl, written where the plan says. */
function writeFileStep(summary: string, path: string, content: string): ActionStep {
  return action("write-file", summary, { mutates: true, params: { path, content } });
}

const writeFile = async (_ctx: unknown, step: ActionStep) => {
  const path = step.params?.path;
  const content = step.params?.content;
  if (typeof path !== "string" || typeof content !== "string") throw new BugError("write-file needs path and content");
  await writeRunFile(path, content, 0o600);
};

/** A kubectl wait: its request timeout covers the whole wait (a watch outlives the default 30 s). */
function waitTarget(kube: KubeTarget, seconds: number): KubeTarget {
  return { ...kube, requestTimeout: `${seconds + 30}s` };
}

/** What a phase plans with when an id is not known yet (a dry run before the agent exists). */
const unknown = (what: string) => `<${what}>`;

function agentIdOf(prior: PriorOutputs): string | null {
  const id = prior.require("agent", "agentId");
  return typeof id === "string" ? id : null;
}

function stringOf(prior: PriorOutputs, phaseId: string, key: string): string {
  const value = prior.require(phaseId, key);
  if (typeof value !== "string") throw new BugError(`${phaseId}.${key} is not a string`);
  return value;
}

function toolSteps(decision: ToolDecision, phaseTool: string): PlanStep[] {
  if (decision.action === "use") return [];
  return [
    action("install-tool", installSummary(decision), {
      mutates: true,
      params: {
        tool: phaseTool,
        version: decision.version,
        url: decision.artifact.url,
        sha256: decision.artifact.sha256,
        path: decision.path,
      },
    }),
  ];
}

async function installToolAction(
  ctx: Pick<RegisterContext, "runner" | "transport" | "onDownload">,
  decision: ToolDecision,
  io: PhaseIo,
) {
  if (decision.action !== "install") return;
  await installTool(decision, {
    runner: ctx.runner,
    ...(ctx.transport === undefined ? {} : { transport: ctx.transport }),
    onProgress: (received, total) => {
      ctx.onDownload?.(decision.tool, received, total);
      io.report(`${decision.tool}: ${(received / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ""} MB`);
    },
  });
  io.set("installed", decision.path);
}

function decisionOf(io: PhaseIo, key: string): ToolDecision {
  const observation = io.observation as { [key: string]: JsonValue } | undefined;
  const decision = observation?.[key];
  if (decision === undefined) throw new BugError(`the observation has no ${key}`);
  return decision as unknown as ToolDecision;
}

// ---------------------------------------------------------------------------------------

const agent = define({
  id: "agent",
  title: "Agent record",
  description: "create the agent in NodeRings, or reuse it (--name / --agent-id)",
  needs: ["api", "identity", "arch"],
  inputs: (ctx) => ({ name: ctx.identity.name ?? null, agentId: ctx.identity.agentId ?? null }),
  async observe(ctx): Promise<JsonValue> {
    if (ctx.identity.agentId !== undefined) {
      const found = await ctx.api.getAgent(ctx.identity.agentId);
      return { exists: true, id: found.id, name: found.name, state: found.state };
    }
    const name = ctx.identity.name;
    if (name === undefined) throw new BugError("the agent phase needs a name or an id");
    const found = await ctx.api.findAgentByName(name);
    return found === undefined
      ? { exists: false, name }
      : { exists: true, id: found.id, name: found.name, state: found.state };
  },
  plan(ctx, { observation }) {
    const seen = observation as { exists: boolean; id?: string; name: string; state?: string };
    if (seen.exists) {
      return [
        action("reuse-agent", `reuse agent ${seen.name} (${seen.id}, ${seen.state}) in NodeRings`, {
          mutates: false,
          params: { id: seen.id ?? null, name: seen.name },
        }),
      ];
    }
    return [
      action(
        "create-agent",
        `create agent ${seen.name} (${ctx.arch}) in NodeRings; a retried or repeated create reuses it, never a duplicate`,
        { mutates: true, params: { name: seen.name, architecture: ctx.arch } },
      ),
    ];
  },
  actions: {
    "reuse-agent": async (_ctx, step, io) => {
      const { id, name } = step.params as { id: string; name: string };
      io.set("agentId", id);
      io.set("name", name);
      io.set("clusterId", name);
      io.set("created", false);
    },
    "create-agent": async (ctx, step, io) => {
      const { name } = step.params as { name: string };
      const { agent: made, created } = await ctx.api.ensureAgent({ name, architecture: ctx.arch });
      io.set("agentId", made.id);
      io.set("name", made.name);
      io.set("clusterId", made.name);
      io.set("created", created);
    },
  },
  preview(_ctx, { observation }) {
    const seen = observation as { exists: boolean; id?: string; name: string };
    return { agentId: seen.exists ? (seen.id ?? null) : null, name: seen.name, clusterId: seen.name };
  },
  async probe(ctx, checkpoint) {
    const id = checkpoint.outputs?.agentId;
    if (typeof id !== "string") return { ok: false, reason: "the checkpoint has no agent id" };
    const found = await ctx.api.getAgent(id);
    return found.id === id ? { ok: true } : { ok: false, reason: `agent ${id} is not in NodeRings` };
  },
});

const prechecks = define({
  id: "prechecks",
  title: "Prechecks",
  description: "OS, kernel, architecture, free ports, disk and memory (unless --skip-prechecks)",
  needs: ["host", "skipPrechecks", "network", "api"],
  invalidatesLater: false,
  guard: (ctx) => (ctx.skipPrechecks ? "--skip-prechecks" : undefined),
  inputs: (ctx) => ({
    requirements: { ...REQUIREMENTS },
    ports: REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`),
    network: { ...ctx.network },
  }),
  async observe(ctx, prior) {
    const facts = await ctx.host.facts();
    const agentId = agentIdOf(prior);
    const reserved = agentId === null ? null : (await ctx.api.getPeeringParameters(agentId)).network.reservedCIDRs;
    return { facts: facts as unknown as JsonValue, reserved };
  },
  plan: (ctx) => [
    action(
      "check-host",
      `check this machine: OS, kernel ≥ ${REQUIREMENTS.minKernel}, ${REQUIREMENTS.architectures.join("/")}, root, ports ${REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`).join(" ")} free, ≥ ${REQUIREMENTS.minDiskBytes / 1024 ** 3} GiB disk, ≥ ${REQUIREMENTS.minMemoryBytes / 1024 ** 3} GiB memory, pod ${ctx.network.podCidr} and service ${ctx.network.serviceCidr} CIDRs clear of NodeRings' reserved ones`,
      { mutates: false },
    ),
  ],
  actions: {
    "check-host": async (ctx, _step, io) => {
      const seen = io.observation as { facts: HostFacts; reserved: string[] | null } | undefined;
      if (seen === undefined) throw new BugError("prechecks ran without facts");
      const checks = assessHost(
        seen.facts,
        REQUIREMENTS,
        seen.reserved === null ? undefined : { plan: ctx.network, reserved: seen.reserved },
      );
      const problems = hostProblems(checks);
      if (problems.length > 0) {
        throw new UserError(
          errorCodes.PRECHECKS_FAILED,
          `${problems.length} of ${checks.length} prechecks failed; nothing was installed`,
          {
            problems,
            next: "fix each one above and run again (or, if you checked them yourself, skip the prechecks)",
          },
        );
      }
      io.set(
        "checks",
        checks.map((check) => `${check.id}: ${check.found}`),
      );
    },
  },
});

const k3s = define({
  id: "k3s",
  title: "k3s",
  description: "install the pinned k3s without flannel and its network policy controller; wait for the node Ready",
  needs: ["pins", "network", "kube", "tools", "wait", "host", "runner", "transport"],
  inputs: (ctx) => ({ version: ctx.pins.pins.tools.k3s.version, network: { ...ctx.network } }),
  async observe(ctx) {
    const facts = await ctx.host.facts();
    const installer = await ctx.tools.k3sInstaller();
    return { nodeName: facts.hostname, installer: installer as unknown as JsonValue };
  },
  plan(ctx, { observation }) {
    const seen = observation as {
      nodeName: string;
      installer: { action: string; path: string; artifact?: { url: string; sha256: string } };
    };
    const version = ctx.pins.pins.tools.k3s.version;
    const wait = waitTarget(ctx.kube, ctx.wait.seconds);
    const steps: PlanStep[] = [];
    if (seen.installer.action === "install") {
      steps.push(
        action(
          "install-installer",
          `download the k3s installer ${seen.installer.artifact?.url}, check sha256 ${seen.installer.artifact?.sha256}, install it as ${displayPath(seen.installer.path)}`,
          { mutates: true },
        ),
      );
    }
    steps.push(
      exec(
        {
          command: "sh",
          args: [
            seen.installer.path,
            "server",
            "--flannel-backend=none",
            "--disable-network-policy",
            `--cluster-cidr=${ctx.network.podCidr}`,
            `--service-cidr=${ctx.network.serviceCidr}`,
            `--node-name=${seen.nodeName}`,
          ],
          env: { INSTALL_K3S_VERSION: version },
        },
        { mutates: true, reads: [seen.installer.path] },
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
    "install-installer": async (ctx) => {
      const decision = await ctx.tools.k3sInstaller();
      if (decision.action === "install") {
        await installInstaller(decision, ctx.transport === undefined ? {} : { transport: ctx.transport });
      }
    },
  },
  outputs: (ctx, { observation }) => ({
    nodeName: (observation as { nodeName: string }).nodeName,
    version: ctx.pins.pins.tools.k3s.version,
  }),
  preview: (_ctx, { observation }) => ({ nodeName: (observation as { nodeName: string }).nodeName }),
  async probe(ctx, checkpoint) {
    const node = checkpoint.outputs?.nodeName;
    if (typeof node !== "string") return { ok: false, reason: "the checkpoint has no node name" };
    return nodeReady(ctx.runner, ctx.kube, node);
  },
});

async function nodeReady(
  runner: RegisterContext["runner"],
  kube: KubeTarget,
  node: string,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const answer = await runKube(runner, kubectlCall(kube, ["get", `node/${node}`, "-o", "json"]), {
    doing: "checking the node",
    kubeconfig: kube.kubeconfig,
    cluster: "the agent cluster",
  });
  if (!answer.found) return { ok: false, reason: `node ${node} is not in the cluster` };
  const conditions = (
    JSON.parse(answer.stdout) as { status?: { conditions?: Array<{ type: string; status: string }> } }
  ).status?.conditions;
  return conditions?.some((c) => c.type === "Ready" && c.status === "True")
    ? { ok: true }
    : { ok: false, reason: `node ${node} is not Ready` };
}

// The recording phase outputs below are kept small: what later phases, status and probes need.

const calico = define({
  id: "calico",
  title: "Calico",
  description: "install the pinned Calico through the tigera operator, IP pool = the pod CIDR; wait until ready",
  needs: ["pins", "network", "kube", "wait", "paths", "calicoManifests", "runner"],
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
  outputs: (ctx) => ({ version: ctx.pins.pins.tools.calico.version, podCidr: ctx.network.podCidr }),
  probe: (ctx) => calicoReady(ctx.runner, ctx.kube),
});

async function calicoReady(
  runner: RegisterContext["runner"],
  kube: KubeTarget,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const answer = await runKube(runner, kubectlCall(kube, ["get", "tigerastatus/calico", "-o", "json"]), {
    doing: "checking Calico",
    kubeconfig: kube.kubeconfig,
    cluster: "the agent cluster",
  });
  if (!answer.found) return { ok: false, reason: "Calico's TigeraStatus is not there" };
  const conditions = (
    JSON.parse(answer.stdout) as { status?: { conditions?: Array<{ type: string; status: string }> } }
  ).status?.conditions;
  return conditions?.some((c) => c.type === "Available" && c.status === "True")
    ? { ok: true }
    : { ok: false, reason: "Calico is not Available" };
}

const liqo = define({
  id: "liqo",
  title: "Liqo",
  description: "install the pinned Liqo with liqoctl for k3s, with the same pod and service CIDRs",
  needs: ["pins", "network", "kube", "wait", "tools", "runner", "transport", "onDownload"],
  inputs: (ctx, prior) => ({
    version: ctx.pins.pins.tools.liqo.version,
    network: { ...ctx.network },
    clusterId: prior.require("agent", "clusterId"),
  }),
  observe: async (ctx) => ({ liqoctl: (await ctx.tools.liqoctl()) as unknown as JsonValue }),
  plan(ctx, { prior, observation }) {
    const liqoctl = (observation as { liqoctl: ToolDecision }).liqoctl;
    return [
      ...toolSteps(liqoctl, "liqoctl"),
      exec(
        {
          command: liqoctl.path,
          args: [
            "install",
            "k3s",
            "--kubeconfig",
            ctx.kube.kubeconfig,
            "--cluster-id",
            stringOf(prior, "agent", "clusterId"),
            "--pod-cidr",
            ctx.network.podCidr,
            "--service-cidr",
            ctx.network.serviceCidr,
            "--version",
            ctx.pins.pins.tools.liqo.version,
            "--timeout",
            `${ctx.wait.seconds}s`,
            "--skip-confirm",
          ],
        },
        { mutates: true },
      ),
    ];
  },
  actions: { "install-tool": async (ctx, _step, io) => installToolAction(ctx, decisionOf(io, "liqoctl"), io) },
  outputs: (ctx, { prior }) => ({
    version: ctx.pins.pins.tools.liqo.version,
    clusterId: stringOf(prior, "agent", "clusterId"),
  }),
  async probe(ctx) {
    const answer = await runKube(ctx.runner, kubectlCall(ctx.kube, ["get", "namespace/liqo", "-o", "name"]), {
      doing: "checking Liqo",
      kubeconfig: ctx.kube.kubeconfig,
      cluster: "the agent cluster",
    });
    return answer.found ? { ok: true } : { ok: false, reason: "the liqo namespace is not there" };
  },
});

interface PeeringObservation {
  known: boolean;
  liqoctl: JsonValue;
  platformClusterId?: string;
  gateway?: { serverLocation: string; serviceType: string; port: number; mtu: number };
  resources?: { cpu: string; memory: string; pods: string };
  inBand?: boolean;
}

const outboundPeer = define({
  id: "outbound-peer",
  title: "Outbound peer",
  description: "peer toward NodeRings with liqoctl, with the parameters and one-time peering user the API gives",
  needs: ["api", "kube", "tools", "network", "pins", "paths", "wait", "redactor", "runner"],
  inputs: (ctx, prior) => ({
    agentId: prior.require("agent", "agentId"),
    clusterId: prior.require("agent", "clusterId"),
    network: { ...ctx.network },
    liqo: ctx.pins.pins.tools.liqo.version,
  }),
  async observe(ctx, prior): Promise<JsonValue> {
    const liqoctl = (await ctx.tools.liqoctl()) as unknown as JsonValue;
    const id = agentIdOf(prior);
    if (id === null) return { known: false, liqoctl };
    const parameters = await ctx.api.getPeeringParameters(id);
    return {
      known: true,
      liqoctl,
      platformClusterId: parameters.platformClusterId,
      gateway: { ...parameters.gateway },
      resources: { ...parameters.resources },
      inBand: parameters.inBand,
    };
  },
  plan(ctx, { prior, observation }) {
    const seen = observation as unknown as PeeringObservation;
    const liqoctl = seen.liqoctl as unknown as ToolDecision;
    const file = join(ctx.paths.run, "noderings-peering.kubeconfig");
    const from = (value: string | number | undefined, what: string) =>
      value === undefined ? unknown(`${what} from NodeRings`) : String(value);
    const clusterId = stringOf(prior, "agent", "clusterId");
    return [
      action(
        "start-outbound-peering",
        `ask NodeRings to start outbound peering of cluster ${clusterId} (pod ${ctx.network.podCidr}, service ${ctx.network.serviceCidr}, Liqo ${ctx.pins.pins.tools.liqo.version}); write the one-time peering user it issues to ${displayPath(file)} (0600)`,
        { mutates: true, params: { clusterId, path: file } },
      ),
      exec(
        {
          command: liqoctl.path,
          args: [
            "peer",
            "--kubeconfig",
            ctx.kube.kubeconfig,
            "--remote-kubeconfig",
            file,
            "--gw-server-service-location",
            from(seen.gateway?.serverLocation, "gateway location"),
            "--gw-server-service-type",
            from(seen.gateway?.serviceType, "gateway service type"),
            "--gw-server-service-port",
            from(seen.gateway?.port, "gateway port"),
            "--mtu",
            from(seen.gateway?.mtu, "MTU"),
            "--cpu",
            from(seen.resources?.cpu, "CPU"),
            "--memory",
            from(seen.resources?.memory, "memory"),
            "--pods",
            from(seen.resources?.pods, "pods"),
            ...(seen.inBand === true ? ["--in-band"] : []),
            "--timeout",
            `${ctx.wait.seconds}s`,
            "--skip-confirm",
          ],
        },
        { mutates: true, reads: [file] },
      ),
      action("remove-file", `remove ${displayPath(file)}: it holds the one-time peering token`, {
        mutates: true,
        params: { path: file },
      }),
    ];
  },
  actions: {
    "start-outbound-peering": async (ctx, step, io) => {
      const { clusterId, path } = step.params as { clusterId: string; path: string };
      const id = agentIdOf(io.prior);
      if (id === null) throw new BugError("outbound peering without an agent id");
      const outbound = await ctx.api.startOutboundPeering(id, {
        clusterId,
        liqoVersion: ctx.pins.pins.tools.liqo.version,
        podCIDR: ctx.network.podCidr,
        serviceCIDR: ctx.network.serviceCidr,
      });
      ctx.redactor.add(outbound.peeringUser.token);
      await writeRunFile(path, renderPeeringKubeconfig(outbound.peeringUser), 0o600);
      io.set("platformClusterId", outbound.platformClusterId);
    },
    "remove-file": async (_ctx, step) => {
      await rm(String(step.params?.path), { force: true });
    },
  },
  async cleanup(ctx) {
    await rm(join(ctx.paths.run, "noderings-peering.kubeconfig"), { force: true });
  },
  preview: (_ctx, { observation }) => ({
    platformClusterId: (observation as unknown as PeeringObservation).platformClusterId ?? null,
  }),
  async probe(ctx, checkpoint) {
    const platform = checkpoint.outputs?.platformClusterId;
    if (typeof platform !== "string") return { ok: false, reason: "the checkpoint has no platform cluster id" };
    const answer = await runKube(
      ctx.runner,
      kubectlCall(ctx.kube, ["get", `foreignclusters.core.liqo.io/${platform}`, "-o", "name"]),
      { doing: "checking the peering", kubeconfig: ctx.kube.kubeconfig, cluster: "the agent cluster" },
    );
    return answer.found ? { ok: true } : { ok: false, reason: `no ForeignCluster ${platform}` };
  },
});

interface OffloadingObservation {
  known: boolean;
  liqoctl: JsonValue;
  namespaces: Array<{ name: string; pod: string; mapping: string; required: boolean }>;
}

const offloading = define({
  id: "offloading",
  title: "Offloading",
  description: "offload the VNC gateway namespace, and each --offload-namespace",
  needs: ["api", "kube", "tools", "offload", "paths", "runner"],
  inputs: (ctx, prior) => ({ agentId: prior.require("agent", "agentId"), optional: [...ctx.offload].sort() }),
  async observe(ctx, prior): Promise<JsonValue> {
    const liqoctl = (await ctx.tools.liqoctl()) as unknown as JsonValue;
    const id = agentIdOf(prior);
    if (id === null) {
      return {
        known: false,
        liqoctl,
        namespaces: [
          {
            name: unknown("required namespaces from NodeRings"),
            pod: unknown("strategy"),
            mapping: unknown("strategy"),
            required: true,
          },
          ...ctx.offload.map((name) => ({
            name,
            pod: unknown("strategy"),
            mapping: unknown("strategy"),
            required: false,
          })),
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
    return { known: true, liqoctl, namespaces: [...required, ...optional] };
  },
  plan(ctx, { observation }) {
    const seen = observation as unknown as OffloadingObservation;
    const liqoctl = seen.liqoctl as unknown as ToolDecision;
    const file = join(ctx.paths.run, "offloaded-namespaces.json");
    const names = seen.namespaces.map((ns) => ns.name);
    const manifest = `${JSON.stringify(
      {
        apiVersion: "v1",
        kind: "List",
        items: names.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
      },
      null,
      2,
    )}\n`;
    return [
      writeFileStep(`write the namespaces to offload (${names.join(", ")}) to ${displayPath(file)}`, file, manifest),
      exec(kubectlCall(ctx.kube, ["apply", "-f", file]), { mutates: true, reads: [file] }),
      ...seen.namespaces.map((ns) =>
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
    "write-file": writeFile,
    "report-offloading": async (ctx, step, io) => {
      const namespaces = (step.params?.namespaces ?? []) as string[];
      const id = agentIdOf(io.prior);
      if (id === null) throw new BugError("offloading without an agent id");
      await ctx.api.reportOffloading(id, { namespaces });
      io.set("namespaces", namespaces);
    },
  },
  async probe(ctx, checkpoint, prior) {
    const id = agentIdOf(prior);
    const recorded = checkpoint.outputs?.namespaces;
    if (id === null || !Array.isArray(recorded)) return { ok: false, reason: "the checkpoint has no namespaces" };
    const targets = await ctx.api.getOffloadingTargets(id);
    const missing = recorded.filter((name) => typeof name !== "string" || !targets.offloaded.includes(name));
    return missing.length === 0
      ? { ok: true }
      : { ok: false, reason: `NodeRings lists ${missing.join(", ")} as not offloaded` };
  },
});

const inboundPeering = define({
  id: "inbound-peering",
  title: "Inbound peering",
  description: "ask NodeRings to peer back, and wait until it reports the handshake complete",
  needs: ["api", "wait"],
  inputs: (_ctx, prior) => ({
    agentId: prior.require("agent", "agentId"),
    clusterId: prior.require("agent", "clusterId"),
  }),
  async observe(ctx, prior): Promise<JsonValue> {
    const id = agentIdOf(prior);
    if (id === null) return { inbound: "None" };
    return { inbound: (await ctx.api.getPeeringStatus(id)).inbound.state };
  },
  plan(ctx, { observation, prior }) {
    const inbound = (observation as { inbound: string }).inbound;
    if (inbound === "Established") {
      return [
        action("inbound-established", "NodeRings already reports the inbound peering Established", { mutates: false }),
      ];
    }
    return [
      action(
        "request-inbound",
        `tell NodeRings the outbound peering of cluster ${stringOf(prior, "agent", "clusterId")} is established and ask it to peer back`,
        { mutates: true },
      ),
      action(
        "wait-inbound",
        `wait up to ${ctx.wait.seconds}s for NodeRings to report the inbound peering Established`,
        {
          mutates: false,
        },
      ),
    ];
  },
  actions: {
    "inbound-established": async (_ctx, _step, io) => io.set("inbound", "Established"),
    "request-inbound": async (ctx, _step, io) => {
      const id = agentIdOf(io.prior);
      if (id === null) throw new BugError("inbound peering without an agent id");
      await ctx.api.requestInboundPeering(id, {
        clusterId: stringOf(io.prior, "agent", "clusterId"),
        outbound: "Established",
      });
    },
    "wait-inbound": async (ctx, _step, io) => {
      const id = agentIdOf(io.prior);
      if (id === null) throw new BugError("inbound peering without an agent id");
      await ctx.api.waitForInboundPeering(id, { intervalMs: ctx.wait.pollMs, timeoutMs: ctx.wait.seconds * 1000 });
      io.set("inbound", "Established");
    },
  },
  async probe(ctx, _checkpoint, prior) {
    const id = agentIdOf(prior);
    if (id === null) return { ok: false, reason: "no agent id" };
    const status = await ctx.api.getPeeringStatus(id);
    return status.inbound.state === "Established"
      ? { ok: true }
      : { ok: false, reason: `NodeRings reports the inbound peering ${status.inbound.state}` };
  },
});

const operator = define({
  id: "operator",
  title: "Operator",
  description:
    "create the Proxmox credentials Secret, then helm-install the pinned proxmox-operator referencing it (optional: --skip-operator-install)",
  needs: ["operator", "kube", "tools", "helmEnv", "wait", "runner", "transport", "onDownload", "redactor"],
  guard: (ctx) =>
    ctx.operator.skip ? "--skip-operator-install: VMs cannot be sold until the operator runs" : undefined,
  inputs: (ctx) => ({
    chart: ctx.operator.chart,
    version: ctx.operator.version,
    namespace: ctx.operator.namespace,
    release: ctx.operator.release,
    secret: ctx.operator.secretName,
  }),
  observe: async (ctx) => ({ helm: (await ctx.tools.helm()) as unknown as JsonValue }),
  plan(ctx, { observation }) {
    const helm = (observation as { helm: ToolDecision }).helm;
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
    return [
      ...toolSteps(helm, "helm"),
      action(
        "create-credentials-secret",
        `create Secret ${op.namespace}/${op.secretName} with the Proxmox credentials (from the ${op.credentialsSource}) in this cluster: they go nowhere else`,
        { mutates: true, params: { namespace: op.namespace, name: op.secretName } },
      ),
      exec(
        { ...upgrade, command: helm.path },
        { mutates: true, ...(op.chart.includes("://") ? {} : { reads: [op.chart] }) },
      ),
    ];
  },
  actions: {
    "install-tool": async (ctx, _step, io) => installToolAction(ctx, decisionOf(io, "helm"), io),
    "create-credentials-secret": async (ctx, _step, io) => {
      const credentials = await ctx.operator.credentials();
      ctx.redactor.add(credentials.tokenSecret);
      // Through stdin: the secret is in no argument, no file, no log line.
      await ctx.runner.run(
        kubectlCall(ctx.kube, ["apply", "-f", "-"], {
          input: credentialsSecret(credentials, ctx.operator.namespace, ctx.operator.secretName),
        }),
      );
      io.set("secret", `${ctx.operator.namespace}/${ctx.operator.secretName}`);
      io.set("release", ctx.operator.release);
      io.set("version", ctx.operator.version);
    },
  },
  async probe(ctx) {
    const helm = await ctx.tools.helm();
    const result = await ctx.runner.run(
      {
        ...helmCall(
          ctx.kube,
          ["status", ctx.operator.release, "--namespace", ctx.operator.namespace, "-o", "json"],
          ctx.helmEnv,
        ),
        command: helm.path,
      },
      { allowFailure: true },
    );
    if (result.exitCode !== 0) return { ok: false, reason: `helm release ${ctx.operator.release} is not installed` };
    const status = (JSON.parse(result.stdout) as { info?: { status?: string } }).info?.status;
    return status === "deployed"
      ? { ok: true }
      : { ok: false, reason: `helm release ${ctx.operator.release} is ${status}` };
  },
});

const verify = define({
  id: "verify",
  title: "Verify",
  description: "pass/fail health gate over everything above, reported to NodeRings; the exit code says which",
  needs: ["api", "kube", "runner", "operator", "pins", "reporter", "clock", "tools", "helmEnv"],
  inputs: () => ({}),
  plan: () => [
    action(
      "check-health",
      "check the node Ready, Calico Available, Liqo installed, the ForeignCluster toward NodeRings, both peering directions and the offloaded namespaces in NodeRings, and the operator release (or that it was skipped)",
      { mutates: false },
    ),
    action("report-health", "post the result to NodeRings (pass or fail, each check; never a secret)", {
      mutates: true,
    }),
  ],
  actions: {
    "check-health": async (ctx, _step, io) => {
      io.set("checks", (await healthChecks(ctx, io.prior)) as unknown as JsonValue);
    },
    "report-health": async (ctx, _step, io) => {
      const checks = io.get("checks") as unknown as HealthCheck[];
      const id = agentIdOf(io.prior);
      if (id === null) throw new BugError("verify without an agent id");
      const failed = checks.filter((check) => check.result === "fail");
      const report: CreateHealthReportRequest = {
        result: failed.length === 0 ? "pass" : "fail",
        checks,
        observedAt: ctx.clock().toISOString(),
        pinSetHash: ctx.pins.hash,
        reporter: ctx.reporter,
      };
      const answer = await ctx.api.postHealthReport(id, report);
      io.set("result", report.result);
      io.set("agentState", answer.agentState);
      if (failed.length > 0) {
        throw new UserError(
          errorCodes.VERIFY_FAILED,
          `${failed.length} of ${checks.length} health checks failed; NodeRings has the agent as ${answer.agentState}`,
          {
            problems: failed.map((check) => ({
              severity: "error" as const,
              source: "verify",
              path: [check.id],
              message: check.message ?? "failed",
            })),
            next: "fix what the checks say, then run verify again",
          },
        );
      }
    },
  },
});

async function healthChecks(
  ctx: Pick<RegisterContext, "api" | "kube" | "runner" | "operator" | "tools" | "helmEnv">,
  prior: PriorOutputs,
): Promise<HealthCheck[]> {
  const checks: HealthCheck[] = [];
  const add = (id: string, ok: boolean | "skip", message?: string) =>
    checks.push({ id, result: ok === "skip" ? "skip" : ok ? "pass" : "fail", ...(message ? { message } : {}) });
  const node = prior.of("k3s")?.nodeName;
  if (typeof node === "string") {
    const ready = await nodeReady(ctx.runner, ctx.kube, node);
    add("k3s-node-ready", ready.ok, ready.ok ? undefined : ready.reason);
  } else add("k3s-node-ready", false, "the k3s phase recorded no node");
  const calicoOk = await calicoReady(ctx.runner, ctx.kube);
  add("calico-ready", calicoOk.ok, calicoOk.ok ? undefined : calicoOk.reason);
  const liqoNs = await runKube(ctx.runner, kubectlCall(ctx.kube, ["get", "namespace/liqo", "-o", "name"]), {
    doing: "checking Liqo",
    kubeconfig: ctx.kube.kubeconfig,
  });
  add("liqo-installed", liqoNs.found, liqoNs.found ? undefined : "the liqo namespace is not there");
  const platform = prior.of("outbound-peer")?.platformClusterId;
  if (typeof platform === "string") {
    const fc = await runKube(
      ctx.runner,
      kubectlCall(ctx.kube, ["get", `foreignclusters.core.liqo.io/${platform}`, "-o", "json"]),
      { doing: "checking the peering", kubeconfig: ctx.kube.kubeconfig },
    );
    const role = fc.found ? (JSON.parse(fc.stdout) as { status?: { role?: string } }).status?.role : undefined;
    add(
      "liqo-foreign-cluster",
      role === "Provider" || role === "ConsumerAndProvider",
      fc.found ? `ForeignCluster ${platform} has role ${role ?? "none"}` : `no ForeignCluster ${platform}`,
    );
  } else add("liqo-foreign-cluster", false, "the outbound-peer phase recorded no platform cluster");
  const id = agentIdOf(prior);
  if (id !== null) {
    const status = await ctx.api.getPeeringStatus(id);
    add("peering-outbound", status.outbound.state === "Established", `outbound ${status.outbound.state}`);
    add("peering-inbound", status.inbound.state === "Established", `inbound ${status.inbound.state}`);
    const recorded = prior.of("offloading")?.namespaces;
    const targets = await ctx.api.getOffloadingTargets(id);
    const wanted = Array.isArray(recorded) ? recorded.map(String) : targets.required.map((ns) => ns.name);
    const missing = wanted.filter((name) => !targets.offloaded.includes(name));
    add(
      "offloading",
      missing.length === 0,
      missing.length === 0 ? `offloaded: ${wanted.join(", ")}` : `not offloaded: ${missing.join(", ")}`,
    );
  }
  if (ctx.operator.skip && prior.of("operator") === undefined) {
    add("operator", "skip", "not installed (--skip-operator-install): VMs cannot be sold until it runs");
  } else {
    const helm = await ctx.tools.helm();
    const result = await ctx.runner.run(
      {
        ...helmCall(
          ctx.kube,
          ["status", ctx.operator.release, "--namespace", ctx.operator.namespace, "-o", "json"],
          ctx.helmEnv,
        ),
        command: helm.path,
      },
      { allowFailure: true },
    );
    const status =
      result.exitCode === 0 ? (JSON.parse(result.stdout) as { info?: { status?: string } }).info?.status : undefined;
    add("operator", status === "deployed", `helm release ${ctx.operator.release}: ${status ?? "not installed"}`);
    const secret = await runKube(
      ctx.runner,
      kubectlCall(ctx.kube, ["get", `secret/${ctx.operator.secretName}`, "-n", ctx.operator.namespace, "-o", "name"]),
      { doing: "checking the credentials Secret", kubeconfig: ctx.kube.kubeconfig },
    );
    add(
      "operator-credentials",
      secret.found,
      secret.found ? undefined : `no Secret ${ctx.operator.namespace}/${ctx.operator.secretName}`,
    );
  }
  return checks;
}

/** The ten phases of `nr cluster register`, in order (NR-1): this list drives the run, help, validation and status. */
export const REGISTER_PHASES: readonly Phase<RegisterContext>[] = [
  agent,
  prechecks,
  k3s,
  calico,
  liqo,
  outboundPeer,
  offloading,
  inboundPeering,
  operator,
  verify,
];
