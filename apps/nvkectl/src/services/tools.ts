import { atLeast, KUBE_TOOLS, probeTool, type ToolSpec, toolProblem } from "@nodekit/kube";
import type { ProcessRunner } from "@nodekit/process";

/** A program a command needs, with the oldest version it works with. */
export interface RequiredTool {
  spec: ToolSpec;
  minimum: string;
  /** Another rule the version must meet, as a problem line (undefined when it is met). */
  also?: (version: string) => string | undefined;
}

/** kubectl, helm and clusterctl with the oldest versions site bootstrap and the install work with. */
export const SITE_KUBE_TOOLS: readonly RequiredTool[] = [
  { spec: KUBE_TOOLS.helm, minimum: "v3.12.0" },
  { spec: KUBE_TOOLS.kubectl, minimum: "v1.30.0" },
  { spec: KUBE_TOOLS.clusterctl, minimum: "v1.11.0" },
];

/**
 * clusterctl for the Cluster API release `pinned`: clusterctl is released in lock-step with
 * Cluster API, and its docs ask for the clusterctl of the release series in use, not older
 * than the release ("for Cluster API v0.3.7, clusterctl >= v0.3.7"; cmd/clusterctl/README.md).
 */
export function clusterctlFor(pinned: string): RequiredTool {
  const series = seriesOf(pinned);
  return {
    spec: KUBE_TOOLS.clusterctl,
    minimum: pinned,
    also: (version) => {
      const found = seriesOf(version);
      if (series === undefined || found === undefined || found === series) return undefined;
      return `clusterctl: found ${version}, need the ${series} series (${series}.x, ${pinned} or newer): the deploy path pins Cluster API ${pinned}`;
    },
  };
}

/** `v1.11` of `v1.11.7` (or of `1.11.7-rc.1`). */
function seriesOf(version: string): string | undefined {
  const found = /^v?(\d+)\.(\d+)\./.exec(version);
  return found === null ? undefined : `v${found[1]}.${found[2]}`;
}

/** Every missing, too old or mismatched tool, one line each (what was found and what is needed), asked at once. */
export async function toolProblems(runner: ProcessRunner, tools: readonly RequiredTool[]): Promise<string[]> {
  const lines = await Promise.all(
    tools.map(async (tool) => {
      const probe = await probeTool(runner, tool.spec);
      const problem = await toolProblem(probe, tool.minimum);
      if (problem !== undefined || !probe.found || probe.version === undefined) return problem;
      return (await atLeast(probe.version, tool.minimum)) ? tool.also?.(probe.version) : undefined;
    }),
  );
  return lines.filter((line): line is string => line !== undefined);
}
