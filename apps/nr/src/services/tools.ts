import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, chmod, mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { UserError } from "@nodekit/errors";
import type { Transport } from "@nodekit/http";
import { downloadArtifact } from "@nodekit/noderings-api";
import { CommandFailedError, type ProcessRunner } from "@nodekit/process";
import { type Arch, type RequiredArtifact, type ResolvedPins, requireArtifact } from "@nodekit/version-pins";
import { errorCodes } from "../errors.ts";
import { displayPath, type NrPaths } from "./home.ts";

/** The companion tools nr may install into ~/.nr/bin (NR-5). */
export type CompanionTool = "helm" | "liqoctl";

const VERSION_ARGS: Record<CompanionTool, readonly string[]> = {
  helm: ["version", "--template", "{{.Version}}"],
  liqoctl: ["version", "--client"],
};

/** What nr will use for a tool: one already here at the pinned version, or the pinned download. */
export type ToolDecision =
  | { tool: string; version: string; action: "use"; path: string }
  | {
      tool: string;
      version: string;
      action: "install";
      path: string;
      artifact: RequiredArtifact;
      /** What was found instead, for the plan: "not found", "helm v3.19.0 at /usr/local/bin/helm". */
      found: string;
    };

/** Strips `v` and a build suffix: `v3.18.6+g4f2a` and `3.18.6` are the same version. */
export function sameVersion(a: string, b: string): boolean {
  const core = (v: string) => v.trim().replace(/^v/, "").replace(/\+.*$/, "");
  return core(a) === core(b);
}

/** The first executable named `name` in PATH's directories. */
async function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/** The version a tool at `path` reports, or undefined when it does not run or says none. */
async function toolVersion(runner: ProcessRunner, tool: CompanionTool, path: string): Promise<string | undefined> {
  try {
    const result = await runner.run({ command: path, args: VERSION_ARGS[tool] });
    return /v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?/.exec(`${result.stdout}\n${result.stderr}`)?.[0];
  } catch (error) {
    if (error instanceof CommandFailedError) return undefined;
    throw error;
  }
}

/**
 * Decides, read-only, where a companion tool comes from: `~/.nr/bin/<tool>` or the one
 * on PATH when it reports the pinned version; otherwise the pinned download for this
 * architecture — which must carry a digest (PINS_DIGEST_MISSING otherwise: fail closed,
 * nothing is downloaded, no trust on first use).
 */
export async function resolveTool(
  tool: CompanionTool,
  options: { pins: ResolvedPins; arch: Arch; paths: NrPaths; runner: ProcessRunner; env?: NodeJS.ProcessEnv },
): Promise<ToolDecision> {
  const pinned = options.pins.pins.tools[tool]?.version;
  if (pinned === undefined) return requireArtifactDecision(tool, options, "not pinned");
  const seen: string[] = [];
  const own = join(options.paths.bin, tool);
  const onPath = await findOnPath(tool, options.env);
  for (const candidate of [own, onPath]) {
    if (candidate === undefined) continue;
    const exists = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (!exists) continue;
    const version = await toolVersion(options.runner, tool, candidate);
    if (version !== undefined && sameVersion(version, pinned)) {
      return { tool, version: pinned, action: "use", path: candidate };
    }
    seen.push(`${tool} ${version ?? "of unknown version"} at ${candidate}`);
  }
  return requireArtifactDecision(tool, options, seen.length === 0 ? "not found" : seen.join(", "));
}

function requireArtifactDecision(
  tool: CompanionTool,
  options: { pins: ResolvedPins; arch: Arch; paths: NrPaths },
  found: string,
): ToolDecision {
  const artifact = requireArtifact(options.pins, tool, options.arch);
  return { tool, version: artifact.version, action: "install", path: join(options.paths.bin, tool), artifact, found };
}

/** One line for the plan: what is downloaded from where, where it goes, what it is checked against. */
export function installSummary(decision: Extract<ToolDecision, { action: "install" }>): string {
  const { artifact } = decision;
  return `install ${decision.tool} ${decision.version} (linux/${artifact.arch}; ${decision.found === "not found" ? "none here" : `found ${decision.found}`}): download ${artifact.url}, check sha256 ${artifact.sha256}, install it as ${displayPath(decision.path)} (keep ${displayPath(join(decision.path, ".."))} on PATH)`;
}

/**
 * Installs a tool into ~/.nr/bin: downloads the pinned file (hashed while streaming; a
 * mismatch or a short body keeps nothing), takes the executable out of its archive, and
 * moves it into place with one rename, so a half-installed tool is never on PATH. Then
 * asks it its version: another one than pinned is removed again (TOOL_INSTALL_FAILED).
 */
export async function installTool(
  decision: Extract<ToolDecision, { action: "install" }>,
  options: {
    runner: ProcessRunner;
    transport?: Transport;
    onProgress?: (received: number, total: number | undefined) => void;
  },
): Promise<void> {
  const bin = join(decision.path, "..");
  await mkdir(bin, { recursive: true, mode: 0o755 });
  const work = await mkdtemp(join(bin, `.${decision.tool}-install-`));
  try {
    const { artifact } = decision;
    const downloaded = join(work, "download");
    await downloadArtifact(
      { ...artifact, label: `${decision.tool} ${decision.version} (${artifact.arch})` },
      downloaded,
      {
        ...(options.transport === undefined ? {} : { transport: options.transport }),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      },
    );
    let executable = downloaded;
    if (artifact.format === "tar.gz") {
      const member = artifact.member ?? decision.tool;
      const { x } = await import("tar");
      const unpacked = join(work, "unpacked");
      await mkdir(unpacked);
      await x({
        file: downloaded,
        cwd: unpacked,
        strict: true,
        filter: (path) => path.replace(/^\.\//, "") === member,
      });
      executable = join(unpacked, member);
      if (!(await exists(executable))) {
        throw installFailed(
          decision,
          `the archive holds no ${member}`,
          "the pins name a member the archive does not have",
        );
      }
    }
    await chmod(executable, 0o755);
    const staged = join(bin, `.${decision.tool}.${process.pid}.new`);
    await rename(executable, staged);
    const version = await toolVersion(options.runner, decision.tool as CompanionTool, staged);
    if (version === undefined || !sameVersion(version, decision.version)) {
      await rm(staged, { force: true });
      throw installFailed(
        decision,
        `the downloaded ${decision.tool} reports ${version ?? "no version"}, not ${decision.version}`,
        "the pinned file is not the pinned version",
      );
    }
    await rename(staged, decision.path);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

function installFailed(decision: ToolDecision, message: string, why: string): UserError {
  return new UserError(errorCodes.TOOL_INSTALL_FAILED, `${message}; nothing was installed`, {
    why,
    next: `install ${decision.tool} ${decision.version} yourself and put it on PATH, or report the pins`,
    facts: { tool: decision.tool },
  });
}

/** The k3s installer: `k3s-install.sh` on PATH (the operator's own), `~/.nr/bin/k3s-install.sh` at the pinned digest, or the pinned download. */
export type InstallerDecision =
  | { action: "use"; path: string; from: "PATH" | "~/.nr/bin" }
  | { action: "install"; path: string; artifact: RequiredArtifact };

const K3S_INSTALLER = "k3s-install.sh";
/** The related tool in a pin set that names the k3s installer (its script, per architecture, with a digest). */
const K3S_INSTALLER_PIN = "k3s-install";

const sha256Of = async (path: string) =>
  createHash("sha256")
    .update(await readFile(path))
    .digest("hex");

/**
 * Where the k3s installer comes from. The operator's own `k3s-install.sh` on PATH wins;
 * else `~/.nr/bin/k3s-install.sh` when it matches the pinned digest; else the pinned
 * download (`k3s-install` in the pins, with a digest). With none of these it is
 * K3S_INSTALLER_MISSING: nr never runs an installer it cannot check.
 */
export async function resolveK3sInstaller(options: {
  pins: ResolvedPins;
  arch: Arch;
  paths: NrPaths;
  env?: NodeJS.ProcessEnv;
}): Promise<InstallerDecision> {
  const onPath = await findOnPath(K3S_INSTALLER, options.env);
  if (onPath !== undefined) return { action: "use", path: onPath, from: "PATH" };
  const own = join(options.paths.bin, K3S_INSTALLER);
  if (options.pins.pins.tools[K3S_INSTALLER_PIN] === undefined) {
    throw new UserError(
      errorCodes.K3S_INSTALLER_MISSING,
      "there is no k3s installer to run, and the pins name none to download",
      {
        why: `neither ${K3S_INSTALLER} on PATH nor a pinned installer (tools.${K3S_INSTALLER_PIN}) with a digest; an unchecked installer is never run`,
        next: [
          `download the official installer (https://get.k3s.io), check it, and put it on PATH as ${K3S_INSTALLER} (chmod +x)`,
          `or add tools.${K3S_INSTALLER_PIN} with its URL and sha256 to the pins`,
        ],
      },
    );
  }
  const artifact = requireArtifact(options.pins, K3S_INSTALLER_PIN, options.arch);
  if ((await exists(own)) && (await sha256Of(own)) === artifact.sha256) {
    return { action: "use", path: own, from: "~/.nr/bin" };
  }
  return { action: "install", path: own, artifact };
}

/** Downloads the pinned installer into ~/.nr/bin (verified, atomic, mode 0755). */
export async function installInstaller(
  decision: Extract<InstallerDecision, { action: "install" }>,
  options: { transport?: Transport } = {},
): Promise<void> {
  const bin = join(decision.path, "..");
  await mkdir(bin, { recursive: true, mode: 0o755 });
  const staged = join(bin, `.${K3S_INSTALLER}.${process.pid}.new`);
  await downloadArtifact({ ...decision.artifact, label: "the k3s installer" }, staged, options);
  await chmod(staged, 0o755);
  await rename(staged, decision.path);
}
