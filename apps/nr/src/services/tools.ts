import { constants, realpathSync } from "node:fs";
import { access, chmod, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { delimiter, join, resolve } from "node:path";
import { isUserError, UserError } from "@nodekit/errors";
import { assertTrustedFile, digestOwnFile, readPrivateFile, writeFileSafe } from "@nodekit/fs-safe";
import type { Transport } from "@nodekit/http";
import { downloadArtifact } from "@nodekit/noderings-api";
import { phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import { CommandFailedError, type ProcessRunner } from "@nodekit/process";
import { type Arch, type RequiredArtifact, type ResolvedPins, requireArtifact } from "@nodekit/version-pins";
import * as z from "zod";
import { errorCodes } from "../errors.ts";
import { displayPath, ensureNrDir, type NrPaths } from "./home.ts";

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

const realOrSelf = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
};

/**
 * The first executable named `name` in PATH's directories, leaving out `except` (nr's own
 * `~/.nr/bin`, which users put on PATH: what is there is checked by its digest, never run
 * to ask its version).
 */
async function findOnPath(name: string, env: NodeJS.ProcessEnv, except: string): Promise<string | undefined> {
  const own = realOrSelf(except);
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "" || realOrSelf(dir) === own) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/**
 * Why a program on PATH is not run, or undefined when only its user or root can have
 * changed it and the directories it is in (fs-safe's assertTrustedFile: a link is followed
 * to its target, which is checked too). PATH is the user's choice, as it is for kubectl;
 * a program another user could have replaced is still not run as root.
 */
async function distrustOnPath(path: string): Promise<string | undefined> {
  try {
    await assertTrustedFile(path, { what: "the program" });
    return undefined;
  } catch (error) {
    if (!isUserError(error)) throw error;
    return error.why === undefined ? error.message : `${error.message}: ${error.why}`;
  }
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

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/);
const TOOLS_API_VERSION = "nr.nodekit.dev/v1";

/**
 * `~/.nr/tools.json`: what nr installed into `~/.nr/bin`, written when it installed it.
 * The pins give the digest of the download — for helm and liqoctl an archive, not the
 * executable inside it — so the executable's own digest is recorded here, beside the
 * download's digest it came from, and both are checked before the tool is used again.
 */
const InstalledToolsSchema = z.strictObject({
  apiVersion: z.literal(TOOLS_API_VERSION),
  kind: z.literal("InstalledTools"),
  tools: z.record(
    z.string(),
    z.strictObject({
      version: z.string(),
      arch: z.string(),
      /** The digest of the pinned download it was taken from (the archive, for a tar.gz). */
      downloadSha256: Sha256,
      /** The digest of the executable installed. */
      sha256: Sha256,
    }),
  ),
});
type InstalledTools = z.infer<typeof InstalledToolsSchema>;
type InstalledTool = InstalledTools["tools"][string];

/** `~/.nr/tools.json`'s text as a record; anything else records nothing (the tools are then installed again). Never throws. */
export function parseInstalledTools(text: string): InstalledTools {
  const empty: InstalledTools = { apiVersion: TOOLS_API_VERSION, kind: "InstalledTools", tools: {} };
  try {
    const parsed = InstalledToolsSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : empty;
  } catch {
    return empty;
  }
}

/** The record of installed tools: only a file of the user's own, 0600, never through a link (else empty). */
async function readInstalledTools(paths: NrPaths): Promise<InstalledTools> {
  const read = await readPrivateFile(paths.tools);
  return parseInstalledTools(read.kind === "read" ? read.data.toString("utf8") : "");
}

async function recordInstalledTool(paths: NrPaths, tool: string, entry: InstalledTool): Promise<void> {
  const record = await readInstalledTools(paths);
  record.tools[tool] = entry;
  await writeFileSafe(paths.tools, `${JSON.stringify(record, null, 2)}\n`, {
    mode: 0o600,
    what: "nr's record of installed tools",
  });
}

/**
 * Whether `~/.nr/bin/<tool>` is the executable nr installed from the pinned download: a
 * regular file of the user's own that no one else may write (never through a link), whose
 * sha256 is the one recorded when it was installed, from a download whose digest is the
 * pins' for this architecture (when the pins give none, as --offline's may not: from a
 * download of the pinned version, checked against the pins of that time). Nothing is run.
 */
async function checkInstalledTool(
  tool: CompanionTool,
  path: string,
  options: { pins: ResolvedPins; arch: Arch; paths: NrPaths },
): Promise<{ ok: true } | { ok: false; found: string | undefined }> {
  const digest = await digestOwnFile(path);
  if (digest.kind === "missing") return { ok: false, found: undefined };
  const at = `${tool} at ${path}`;
  if (digest.kind === "unsafe") return { ok: false, found: `${at} (not used: ${digest.reason})` };
  if (digest.kind === "unreadable") return { ok: false, found: `${at} (not used: unreadable, ${digest.code})` };
  const pin = options.pins.pins.tools[tool];
  const recorded = (await readInstalledTools(options.paths)).tools[tool];
  const pinnedDownload = pin?.artifacts?.[options.arch]?.sha256;
  let why: string | undefined;
  if (recorded === undefined) why = `not recorded in ${displayPath(options.paths.tools)} as installed by nr`;
  else if (recorded.sha256 !== digest.sha256) why = "its sha256 is not the one nr installed";
  else if (recorded.arch !== options.arch || pin === undefined || !sameVersion(recorded.version, pin.version)) {
    why = `installed as ${tool} ${recorded.version} (${recorded.arch})`;
  } else if (pinnedDownload !== undefined && recorded.downloadSha256 !== pinnedDownload) {
    why = "installed from another download than the pins name";
  }
  return why === undefined ? { ok: true } : { ok: false, found: `${at} (not used: ${why})` };
}

/**
 * Decides, read-only, where a companion tool comes from: `~/.nr/bin/<tool>` when it is the
 * executable nr installed from the pinned download (checked by digest, never run); else the
 * one on PATH when only its user or root can have changed it and it reports the pinned
 * version; otherwise the pinned download for this architecture — which must carry a digest
 * (PINS_DIGEST_MISSING otherwise: fail closed, nothing is downloaded, no trust on first use).
 */
export async function resolveTool(
  tool: CompanionTool,
  options: { pins: ResolvedPins; arch: Arch; paths: NrPaths; runner: ProcessRunner; env?: NodeJS.ProcessEnv },
): Promise<ToolDecision> {
  const pinned = options.pins.pins.tools[tool]?.version;
  if (pinned === undefined) return requireArtifactDecision(tool, options, "not pinned");
  const seen: string[] = [];
  const own = join(options.paths.bin, tool);
  const installed = await checkInstalledTool(tool, own, options);
  if (installed.ok) return { tool, version: pinned, action: "use", path: own };
  if (installed.found !== undefined) seen.push(installed.found);
  const onPath = await findOnPath(tool, options.env ?? process.env, options.paths.bin);
  if (onPath !== undefined) {
    const distrust = await distrustOnPath(onPath);
    if (distrust !== undefined) seen.push(`${tool} at ${onPath} (not run: ${distrust})`);
    else {
      const version = await toolVersion(options.runner, tool, onPath);
      if (version !== undefined && sameVersion(version, pinned)) {
        return { tool, version: pinned, action: "use", path: onPath };
      }
      seen.push(`${tool} ${version ?? "of unknown version"} at ${onPath}`);
    }
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

interface DownloadContext {
  paths: NrPaths;
  transport?: Transport | undefined;
  onProgress?: (received: number, total: number | undefined) => void;
  /** Ctrl-C: the download stops, its partial file is removed, and the run is interrupted. */
  signal?: AbortSignal | undefined;
}

/** Downloads as @nodekit/noderings-api does, stopping at `signal`: RUN_INTERRUPTED then, with nothing kept. */
async function download(
  spec: Parameters<typeof downloadArtifact>[0] & { label: string },
  destination: string,
  options: DownloadContext,
): Promise<void> {
  try {
    await downloadArtifact(spec, destination, {
      ...(options.transport === undefined ? {} : { transport: options.transport }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
  } catch (error) {
    if (options.signal?.aborted !== true) throw error;
    throw new UserError(
      phaseRunnerErrorCodes.RUN_INTERRUPTED,
      `interrupted during the download of ${spec.label}; the partial file was removed`,
      { why: "the run was asked to stop", next: "resume to download it again", cause: error },
    );
  }
}

/**
 * Installs a tool into ~/.nr/bin: downloads the pinned file (hashed while streaming; a
 * mismatch or a short body keeps nothing), takes the executable out of its archive, and
 * moves it into place with one rename, so a half-installed tool is never on PATH. Then
 * asks it its version: another one than pinned is removed again (TOOL_INSTALL_FAILED).
 * The executable's digest is recorded in ~/.nr/tools.json: it is used again only while it
 * still has that digest. Ctrl-C (`signal`) stops the download and removes what it wrote.
 */
export async function installTool(
  decision: Extract<ToolDecision, { action: "install" }>,
  options: DownloadContext & { runner: ProcessRunner },
): Promise<void> {
  const bin = await ensureNrDir(options.paths, "bin");
  const work = await mkdtemp(join(bin, `.${decision.tool}-install-`));
  const staged = join(bin, `.${decision.tool}.${process.pid}.new`);
  try {
    const { artifact } = decision;
    const downloaded = join(work, "download");
    await download(
      { ...artifact, label: `${decision.tool} ${decision.version} (${artifact.arch})` },
      downloaded,
      options,
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
    await rename(executable, staged);
    // It came out of the download whose digest was just checked: asking it its version runs nothing unverified.
    const version = await toolVersion(options.runner, decision.tool as CompanionTool, staged);
    if (version === undefined || !sameVersion(version, decision.version)) {
      throw installFailed(
        decision,
        `the downloaded ${decision.tool} reports ${version ?? "no version"}, not ${decision.version}`,
        "the pinned file is not the pinned version",
      );
    }
    const digest = await digestOwnFile(staged);
    if (digest.kind !== "hashed")
      throw installFailed(decision, `cannot read the installed ${decision.tool}`, digest.kind);
    await rename(staged, decision.path);
    await recordInstalledTool(options.paths, decision.tool, {
      version: decision.version,
      arch: artifact.arch,
      downloadSha256: artifact.sha256,
      sha256: digest.sha256,
    });
  } finally {
    await rm(staged, { force: true });
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
  | {
      action: "install";
      path: string;
      artifact: RequiredArtifact;
      /** An installer found and not used, and why, for the plan. */
      passedOver?: string;
    };

const K3S_INSTALLER = "k3s-install.sh";
/** The related tool in a pin set that names the k3s installer (its script, per architecture, with a digest). */
const K3S_INSTALLER_PIN = "k3s-install";

/**
 * Where the k3s installer comes from. The operator's own `k3s-install.sh` on PATH wins
 * when only its user or root can have changed it; else `~/.nr/bin/k3s-install.sh` when it
 * is a file of the user's own with the pinned digest; else the pinned download
 * (`k3s-install` in the pins, with a digest). With none of these it is
 * K3S_INSTALLER_MISSING: nr never runs an installer it cannot check.
 */
export async function resolveK3sInstaller(options: {
  pins: ResolvedPins;
  arch: Arch;
  paths: NrPaths;
  env?: NodeJS.ProcessEnv;
}): Promise<InstallerDecision> {
  const onPath = await findOnPath(K3S_INSTALLER, options.env ?? process.env, options.paths.bin);
  const distrust = onPath === undefined ? undefined : await distrustOnPath(onPath);
  if (onPath !== undefined && distrust === undefined) return { action: "use", path: onPath, from: "PATH" };
  const passedOver = onPath === undefined ? undefined : `${onPath} not used: ${distrust}`;
  const own = join(options.paths.bin, K3S_INSTALLER);
  if (options.pins.pins.tools[K3S_INSTALLER_PIN] === undefined) {
    throw new UserError(
      errorCodes.K3S_INSTALLER_MISSING,
      "there is no k3s installer to run, and the pins name none to download",
      {
        why: `neither ${K3S_INSTALLER} on PATH${passedOver === undefined ? "" : ` (${passedOver})`} nor a pinned installer (tools.${K3S_INSTALLER_PIN}) with a digest; an unchecked installer is never run`,
        next: [
          `download the official installer (https://get.k3s.io), check it, and put it on PATH as ${K3S_INSTALLER} (chmod +x)`,
          `or add tools.${K3S_INSTALLER_PIN} with its URL and sha256 to the pins`,
        ],
      },
    );
  }
  const artifact = requireArtifact(options.pins, K3S_INSTALLER_PIN, options.arch);
  const digest = await digestOwnFile(own);
  if (digest.kind === "hashed" && digest.sha256 === artifact.sha256) {
    return { action: "use", path: own, from: "~/.nr/bin" };
  }
  return { action: "install", path: own, artifact, ...(passedOver === undefined ? {} : { passedOver }) };
}

/** Downloads the pinned installer into ~/.nr/bin (verified, atomic, mode 0755). Ctrl-C (`signal`) stops it, keeping nothing. */
export async function installInstaller(
  decision: Extract<InstallerDecision, { action: "install" }>,
  options: DownloadContext,
): Promise<void> {
  const bin = await ensureNrDir(options.paths, "bin");
  const staged = join(bin, `.${K3S_INSTALLER}.${process.pid}.new`);
  try {
    await download({ ...decision.artifact, label: "the k3s installer" }, staged, options);
    await chmod(staged, 0o755);
    await rename(staged, decision.path);
  } finally {
    await rm(staged, { force: true });
  }
}
