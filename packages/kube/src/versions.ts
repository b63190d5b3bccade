import { UserError } from "@nodekit/errors";
import { kubeErrorCodes as errorCodes } from "@nodekit/kube-calls";
import { CommandFailedError, type ProcessRunner } from "@nodekit/process";

/** How to ask a program its version. */
export interface ToolSpec {
  command: string;
  versionArgs: readonly string[];
  /** The version in the program's answer (`v1.32.3`), or undefined when it cannot be read. */
  parse: (stdout: string) => string | undefined;
  /** Environment the question needs (clusterctl: its version check off, or it asks GitHub first). */
  env?: Readonly<Record<string, string>>;
}

const semverIn = (text: string): string | undefined => /v?(\d+\.\d+\.\d+)(?:[-+][0-9A-Za-z.+-]*)?/.exec(text)?.[0];

/** kubectl, helm and clusterctl, asked without reaching any cluster. */
export const KUBE_TOOLS = {
  kubectl: {
    command: "kubectl",
    versionArgs: ["version", "--client", "--output=json"],
    parse: (stdout) => {
      try {
        const version = (JSON.parse(stdout) as { clientVersion?: { gitVersion?: unknown } }).clientVersion?.gitVersion;
        return typeof version === "string" ? version : undefined;
      } catch {
        return semverIn(stdout);
      }
    },
  },
  helm: { command: "helm", versionArgs: ["version", "--short"], parse: semverIn },
  clusterctl: {
    command: "clusterctl",
    versionArgs: ["version", "--output=short"],
    parse: semverIn,
    env: { CLUSTERCTL_DISABLE_VERSIONCHECK: "true" },
  },
} as const satisfies Record<string, ToolSpec>;

export type ToolProbe =
  | { command: string; found: false }
  | { command: string; found: true; version: string | undefined };

/** Asks one program its version: not found on PATH, found with a version, or found but unreadable. */
export async function probeTool(
  runner: ProcessRunner,
  spec: ToolSpec,
  env?: Record<string, string>,
): Promise<ToolProbe> {
  try {
    const merged = { ...spec.env, ...env };
    const call = { command: spec.command, args: spec.versionArgs };
    const result = await runner.run(Object.keys(merged).length > 0 ? { ...call, env: merged } : call);
    return { command: spec.command, found: true, version: spec.parse(`${result.stdout}\n${result.stderr}`) };
  } catch (error) {
    if (error instanceof CommandFailedError && error.notFound) return { command: spec.command, found: false };
    if (error instanceof CommandFailedError) return { command: spec.command, found: true, version: undefined };
    throw error;
  }
}

/**
 * Whether `found` is at least `minimum` (`v1.32.3+k3s1` against `v1.30.0`; pre-release and
 * build parts ignored). semver is loaded here, on the first comparison, not with the package.
 */
export async function atLeast(found: string, minimum: string): Promise<boolean> {
  const [{ default: coerce }, { default: gte }] = await Promise.all([
    import("semver/functions/coerce.js"),
    import("semver/functions/gte.js"),
  ]);
  const a = coerce(found);
  const b = coerce(minimum);
  return a !== null && b !== null && gte(a, b);
}

/** What a probe says against a minimum: undefined when fine, else the one-line problem. */
export async function toolProblem(probe: ToolProbe, minimum: string | undefined): Promise<string | undefined> {
  if (!probe.found) return `${probe.command}: not found on PATH${minimum ? ` (need ${minimum} or newer)` : ""}`;
  if (minimum === undefined) return undefined;
  if (probe.version === undefined) return `${probe.command}: its version could not be read (need ${minimum} or newer)`;
  if (!(await atLeast(probe.version, minimum)))
    return `${probe.command}: found ${probe.version}, need ${minimum} or newer`;
  return undefined;
}

/**
 * Checks that a kube tool is on PATH and new enough: KUBE_TOOL_MISSING or KUBE_TOOL_TOO_OLD
 * (Precondition) otherwise, naming what was found and what is needed.
 */
export async function requireTool(
  runner: ProcessRunner,
  spec: ToolSpec,
  minimum: string,
  doing: string,
): Promise<string> {
  const probe = await probeTool(runner, spec);
  if (!probe.found) {
    throw new UserError(errorCodes.KUBE_TOOL_MISSING, `${spec.command} was not found on PATH`, {
      why: `${doing} runs ${spec.command} ${minimum} or newer`,
      next: `install ${spec.command} ${minimum} or newer and make sure it is on PATH`,
      facts: { tool: spec.command, minimum },
    });
  }
  if (probe.version === undefined || !(await atLeast(probe.version, minimum))) {
    const found = probe.version ?? "a version that could not be read";
    throw new UserError(
      errorCodes.KUBE_TOOL_TOO_OLD,
      `${spec.command} on PATH is ${found}; ${minimum} or newer is needed`,
      {
        why: `${doing} runs ${spec.command} ${minimum} or newer`,
        next: `install ${spec.command} ${minimum} or newer ahead of the one on PATH`,
        facts: { tool: spec.command, minimum, found },
      },
    );
  }
  return probe.version;
}
