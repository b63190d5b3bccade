import { UserError } from "@nodekit/errors";
import { kubeErrorCodes } from "@nodekit/kube";
import type { NvkeClient } from "@nodekit/nvke-api";
import { type InstallRecord, readInstallRecord } from "./install-record.ts";
import { kubectl, type SiteCluster } from "./kubectl.ts";

// `nvkectl version` (issue 26 §2, NV-17), with kubectl version's habits: the client's version
// always, then each server's; what does not answer is left out of the report and its error
// ends the command (exit 6 for a site that does not answer) after the rest is printed.

export interface VersionReport {
  clientVersion: { nvkectl: string; node: string; platform: string };
  /** The site asked (absent with --client, and with no site configured: the cluster is KUBECONFIG's then). */
  site?: string;
  /** The controller API's version (the OpenAPI document's info.version), and where it was asked. */
  controller?: { url: string; apiVersion: string };
  /** The site cluster's Kubernetes version, as its API server reports it. */
  siteCluster?: { kubernetesVersion: string; platform?: string };
  /** What the install record says (null: no record, nothing is installed). */
  installed?: InstalledSummary | null;
}

interface InstalledSummary {
  release?: InstallRecord["release"];
  deployPath: string;
  installedAt: string;
  items: Array<{ id: string; version?: string; digest: string }>;
  providers: Array<{ type: string; name: string; version: string }>;
}

export interface VersionOptions {
  client: { version: string };
  /** Only the client's version (no site is asked). */
  clientOnly?: boolean;
  /**
   * The site to ask. With no site configured, `name` and `controller` are absent: the site
   * cluster is the one kubectl would use (KUBECONFIG, --context), and no controller is asked.
   */
  site?: () => Promise<{ name?: string; cluster: SiteCluster; controller?: () => Promise<NvkeClient> }>;
}

/** The report, and the first failure of a server that was asked (thrown after printing by the caller). */
export async function versions(options: VersionOptions): Promise<{ report: VersionReport; failure?: unknown }> {
  const report: VersionReport = {
    clientVersion: {
      nvkectl: options.client.version,
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
  };
  if (options.clientOnly || options.site === undefined) return { report };
  let site: Awaited<ReturnType<NonNullable<VersionOptions["site"]>>>;
  try {
    site = await options.site();
  } catch (failure) {
    return { report, failure };
  }
  if (site.name !== undefined) report.site = site.name;
  const { runner, ...target } = site.cluster;
  const [cluster, record, controller] = await Promise.allSettled([
    clusterVersion(site.cluster),
    readInstallRecord(runner, target),
    site.controller === undefined
      ? Promise.resolve(undefined)
      : site
          .controller()
          .then(async (client) => ({ url: client.baseUrl, apiVersion: apiVersionOf(await client.openApi()) })),
  ]);
  if (controller.status === "fulfilled" && controller.value !== undefined) report.controller = controller.value;
  if (cluster.status === "fulfilled") report.siteCluster = cluster.value;
  if (record.status === "fulfilled") report.installed = record.value === undefined ? null : summary(record.value);
  const failures = [cluster, controller, record].flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  // The site not answering speaks first (kubectl version's habit): it explains the others.
  const unreachable = failures.find((f) => f instanceof UserError && f.exitCode === 6);
  const failure = unreachable ?? failures[0];
  return failure === undefined ? { report } : { report, failure };
}

function summary(record: InstallRecord): InstalledSummary {
  return {
    ...(record.release === undefined ? {} : { release: record.release }),
    deployPath: record.deployPath,
    installedAt: record.installedAt,
    items: record.items.map((item) => ({
      id: item.id,
      ...(item.version === undefined ? {} : { version: item.version }),
      digest: item.chartDigest ?? item.digest,
    })),
    providers: record.providers.map((p) => ({ type: p.type, name: p.name, version: p.version })),
  };
}

function apiVersionOf(document: Record<string, unknown>): string {
  const info = document.info as { version?: unknown } | undefined;
  return typeof info?.version === "string" ? info.version : "unknown";
}

async function clusterVersion(cluster: SiteCluster): Promise<NonNullable<VersionReport["siteCluster"]>> {
  const answer = await kubectl(cluster, ["version", "--output=json"], "asking the site cluster its version");
  if (!answer.found) {
    throw new UserError(kubeErrorCodes.KUBE_COMMAND_FAILED, "the site cluster did not say its version", {
      why: answer.failure.message,
    });
  }
  const parsed = JSON.parse(answer.stdout) as { serverVersion?: { gitVersion?: string; platform?: string } };
  const server = parsed.serverVersion;
  if (server?.gitVersion === undefined) {
    throw new UserError(kubeErrorCodes.KUBE_COMMAND_FAILED, "the site cluster did not say its version", {
      why: "kubectl version printed no serverVersion",
    });
  }
  return {
    kubernetesVersion: server.gitVersion,
    ...(server.platform === undefined ? {} : { platform: server.platform }),
  };
}

/** kubectl version's lines: one per version known. */
export function versionLines(report: VersionReport): string[] {
  const c = report.clientVersion;
  const lines = [`Client Version: ${c.nvkectl} (Node.js ${c.node}, ${c.platform})`];
  if (report.site !== undefined) lines.push(`Site: ${report.site}`);
  if (report.controller !== undefined) {
    lines.push(`Controller API Version: ${report.controller.apiVersion} (${report.controller.url})`);
  }
  if (report.siteCluster !== undefined) lines.push(`Site Kubernetes Version: ${report.siteCluster.kubernetesVersion}`);
  if (report.installed === null) lines.push("Installed Release: none (the site has no install record)");
  else if (report.installed !== undefined) {
    const i = report.installed;
    const release =
      i.release === undefined
        ? `deploy path ${i.deployPath}, without a release`
        : `${i.release.name} ${i.release.version} (${i.release.digest}), deploy path ${i.deployPath}`;
    lines.push(`Installed Release: ${release}, installed ${i.installedAt}`);
  }
  return lines;
}
