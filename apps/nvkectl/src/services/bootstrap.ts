import { connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import { UserError } from "@nodekit/errors";
import { checkWriteTarget, restrictFile } from "@nodekit/fs-safe";
import { action, createPlan, exec, type Plan, runPlan } from "@nodekit/plan";
import type { ProcessRunner } from "@nodekit/process";
import type { SiteSpec } from "@nodekit/sitespec";
import { errorCodes } from "../errors.ts";
import { readSiteSpec } from "./install.ts";
import { type RequiredTool, SITE_KUBE_TOOLS, toolProblems } from "./tools.ts";

const semverIn = (text: string): string | undefined => /v?(\d+\.\d+\.\d+)/.exec(text)?.[0];

/** What site bootstrap needs on the host (NV-4), with the oldest version it works with. */
const BOOTSTRAP_TOOLS: readonly RequiredTool[] = [
  { spec: { command: "nerdctl", versionArgs: ["--version"], parse: semverIn }, minimum: "v1.7.0" },
  { spec: { command: "containerd", versionArgs: ["--version"], parse: semverIn }, minimum: "v1.7.0" },
  { spec: { command: "kind", versionArgs: ["version"], parse: semverIn }, minimum: "v0.20.0" },
  ...SITE_KUBE_TOOLS,
];

export interface BootstrapOptions {
  siteSpec: string;
  /** Where `<site>.kubeconfig` is written. Default: beside the site spec. */
  kubeconfigDir?: string | undefined;
  runner: ProcessRunner;
  dryRun: boolean;
  /** How long each host's TCP check may take. */
  reachTimeoutMs?: number;
  cwd?: string;
}

/** Whether a TCP connection to host:port opens within the timeout. */
function reachable(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (problem: string | undefined) => {
      socket.destroy();
      done(problem);
    };
    socket.setTimeout(timeoutMs, () => finish(`no answer in ${timeoutMs / 1000}s`));
    socket.once("connect", () => finish(undefined));
    socket.once("error", (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
  });
}

/** Every missing or too old tool, each with what was found and what is needed. */
function checkPrerequisites(runner: ProcessRunner): Promise<string[]> {
  return toolProblems(runner, BOOTSTRAP_TOOLS);
}

/** The hosts whose nvke-agent port does not answer, checked concurrently. */
async function checkHosts(site: SiteSpec, timeoutMs: number): Promise<string[]> {
  const port = site.spec.agentPort;
  const results = await Promise.all(
    site.spec.hosts.map(async (host) => {
      const problem = await reachable(host.ip, port, timeoutMs);
      return problem === undefined ? undefined : `${host.name} (${host.ip}:${port}): ${problem}`;
    }),
  );
  return results.filter((line): line is string => line !== undefined);
}

/** The bootstrap as a plan: create the kind cluster on nerdctl (unless it exists) and restrict its kubeconfig. */
/**
 * What kind (through nerdctl) takes from the environment beyond what every program gets
 * (@nodekit/process INHERITED_ENV): which containerd and how nerdctl is configured, and
 * where registry logins are, never their contents.
 */
const KIND_ENV = [
  "CONTAINERD_ADDRESS",
  "CONTAINERD_NAMESPACE",
  "CONTAINERD_SNAPSHOTTER",
  "NERDCTL_TOML",
  "CNI_PATH",
  "NETCONFPATH",
  "DOCKER_CONFIG",
];

function planBootstrap(site: SiteSpec, kubeconfig: string, existing: readonly string[]): Plan {
  const name = site.metadata.name;
  const exists = existing.includes(name);
  return createPlan(
    `bootstrap the management cluster of site ${name}`,
    [
      {
        id: "kind-cluster",
        title: exists ? `kind cluster ${name} exists already` : `kind cluster ${name} on nerdctl`,
        steps: exists
          ? []
          : [
              exec(
                {
                  command: "kind",
                  args: ["create", "cluster", "--name", name, "--kubeconfig", kubeconfig, "--wait", "5m"],
                  env: { KIND_EXPERIMENTAL_PROVIDER: "nerdctl" },
                  inheritEnv: KIND_ENV,
                },
                { mutates: true },
              ),
              action("restrict-file", `chmod 0600 ${kubeconfig}`, { mutates: true, params: { path: kubeconfig } }),
            ],
      },
    ],
    { site: name, existingClusters: [...existing] },
  );
}

/**
 * `nvkectl site bootstrap`: checks every prerequisite and every host first (all problems
 * at once), then creates the kind cluster and writes `<site>.kubeconfig` (0600).
 */
export async function bootstrapSite(options: BootstrapOptions): Promise<{ plan: Plan; kubeconfig: string }> {
  const cwd = options.cwd ?? process.cwd();
  const site = await readSiteSpec(options.siteSpec, cwd);
  const [missing, unreachable] = await Promise.all([
    checkPrerequisites(options.runner),
    checkHosts(site, options.reachTimeoutMs ?? 3000),
  ]);
  if (missing.length > 0) {
    throw new UserError(
      errorCodes.BOOTSTRAP_PREREQUISITES_MISSING,
      `site bootstrap needs ${missing.length} tool${missing.length === 1 ? "" : "s"} this host lacks:\n  ${missing.join("\n  ")}`,
      {
        why: "the site cluster is a kind cluster on nerdctl and containerd; helm, kubectl and clusterctl install the stack on it",
        ...(unreachable.length === 0 ? {} : { next: `also unreachable: ${unreachable.join("; ")}` }),
        facts: { missing: missing.length },
      },
    );
  }
  if (unreachable.length > 0) {
    throw new UserError(
      errorCodes.HOSTS_UNREACHABLE,
      `${unreachable.length} of ${site.spec.hosts.length} hosts do not answer on the nvke-agent port:\n  ${unreachable.join("\n  ")}`,
      {
        why: "the site's controllers reach each host's nvke-agent",
        next: "check that nvke-agent runs on those hosts and that no firewall blocks the port",
        facts: { unreachable: unreachable.length },
      },
    );
  }
  const kubeconfig = join(
    resolve(cwd, options.kubeconfigDir ?? dirname(resolve(cwd, options.siteSpec))),
    `${site.metadata.name}.kubeconfig`,
  );
  // kind writes (merges into) this file and we narrow it next: never through a link planted
  // there, never another user's file (issue 9, item 1). Checked in the dry run too.
  await checkWriteTarget(kubeconfig, { what: "the site kubeconfig" });
  const listed = await options.runner.run({
    command: "kind",
    args: ["get", "clusters"],
    env: { KIND_EXPERIMENTAL_PROVIDER: "nerdctl" },
    inheritEnv: KIND_ENV,
  });
  const existing = listed.stdout
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const plan = planBootstrap(site, kubeconfig, existing);
  if (!options.dryRun) {
    await runPlan(plan, {
      runner: options.runner,
      actions: {
        "restrict-file": async (step) =>
          restrictFile(String(step.params?.path), 0o600, { what: "the site kubeconfig" }),
      },
    });
  }
  return { plan, kubeconfig };
}
