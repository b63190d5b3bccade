import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import type { Transport } from "@nodekit/http";
import { isolatedToolEnv, kubeToolError } from "@nodekit/kube";
import { createNodeRingsClient, type NodeRingsClient } from "@nodekit/noderings-api";
import type { PhaseEvent, RunPhasesOptions } from "@nodekit/phase-runner";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import { ARCHITECTURES, type Arch } from "@nodekit/version-pins";
import { errorCodes } from "../errors.ts";
import type { RegisterContext } from "../register/context.ts";
import { type ApiEndpoint, clearRunLeftovers, displayPath, type NrPaths } from "./home.ts";
import type { HostFacts } from "./host.ts";

// What register, reset and upgrade set up alike around their phases.

/** What register, reset and upgrade are all given besides their own options. */
export interface RunServiceOptions {
  env: NodeJS.ProcessEnv;
  runner: ProcessRunner;
  /** Runs the plans' exec steps (default: `runner`); a test passes a recording one. */
  planRunner?: ProcessRunner;
  redactor: Redactor;
  version: string;
  onEvent?: (event: PhaseEvent) => void;
  debug: (message: string) => void;
  signal?: AbortSignal;
  transport?: Transport;
}

/** What the runs that may download companion tools (register, upgrade) are given besides. */
export interface ToolRunServiceOptions extends RunServiceOptions {
  warn: (message: string) => void;
  onDownload?: (tool: string, received: number, total: number | undefined) => void;
  /** A companion tool installed into ~/.nr/bin, as it happens (the run may still fail later). */
  onInstalled?: (tool: string) => void;
}

/**
 * The parts of the phases' context register and upgrade fill alike from their options: the
 * waits, helm's own HOME and XDG directories under the run directory, the reporter, the
 * downloads; each tool installed is pushed to `installed`, then told to `onInstalled`.
 */
export function toolRunContext(
  options: ToolRunServiceOptions & { waitSeconds: number; pollMs: number },
  paths: NrPaths,
  installed: string[],
): Pick<
  RegisterContext,
  "wait" | "helmEnv" | "redactor" | "reporter" | "clock" | "transport" | "onDownload" | "onInstalled"
> {
  return {
    wait: { seconds: options.waitSeconds, pollMs: options.pollMs },
    helmEnv: isolatedToolEnv(join(paths.run, "helm")),
    redactor: options.redactor,
    reporter: `nr/${options.version}`,
    clock: () => new Date(),
    transport: options.transport,
    onDownload: options.onDownload,
    onInstalled: (tool) => {
      installed.push(tool);
      options.onInstalled?.(tool);
    },
  };
}

/** The NodeRings API client of a run: its endpoint and token, nr's User-Agent, the request deadline, debug lines. */
export function nodeRingsApi(
  endpoint: ApiEndpoint,
  options: {
    version: string;
    apiTimeoutMs?: number | undefined;
    debug: (line: string) => void;
    transport?: Transport | undefined;
  },
): NodeRingsClient {
  return createNodeRingsClient({
    baseUrl: endpoint.url,
    token: () => endpoint.token,
    userAgent: `nr/${options.version}`,
    ...(options.apiTimeoutMs === undefined ? {} : { timeoutMs: options.apiTimeoutMs }),
    log: (line) => options.debug(line),
    ...(options.transport === undefined ? {} : { transport: options.transport }),
  });
}

/** A failed kubectl or helm call of a run, classified once (@nodekit/kube), saying what the run was doing. */
export function kubeFailure(
  doing: string,
  kubeconfig: string,
): NonNullable<RunPhasesOptions<unknown>["describeFailure"]> {
  return (error, step) =>
    /(^|\/)(kubectl|helm)$/.test(step.call.command)
      ? kubeToolError(error, step.call, { doing, kubeconfig, cluster: "the agent cluster" })
      : undefined;
}

/** This machine's architecture, when NodeRings pins tools for it. */
export function supportedArch(facts: Pick<HostFacts, "arch">): Arch {
  if (!(ARCHITECTURES as readonly string[]).includes(facts.arch)) {
    throw new UserError(errorCodes.PRECHECKS_FAILED, `this machine's architecture ${facts.arch} is not supported`, {
      why: `NodeRings pins tools for ${ARCHITECTURES.join(", ")}`,
      next: "register a VM of a supported architecture",
    });
  }
  return facts.arch as Arch;
}

/**
 * Once a run holds the lock: removes what a killed run left in ~/.nr (a one-time kubeconfig,
 * a partial download), which no run can be using now, and names it in a warning.
 */
export async function clearLeftovers(paths: NrPaths, env: NodeJS.ProcessEnv, warn: (message: string) => void) {
  const removed = await clearRunLeftovers(paths);
  if (removed.length > 0) {
    warn(`removed what a run that was killed left in ${displayPath(paths.home, env)}: ${removed.join(", ")}`);
  }
}
