import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Arch, DEFAULT_PINS, type PinSet } from "@nodekit/version-pins";
import { create } from "tar";

/** One file the emulator serves at `/artifacts/<tool>/<version>/<file>`. */
export interface ServedArtifact {
  tool: "helm" | "liqoctl" | "k3s-install";
  version: string;
  arch: Arch;
  /** The file name in the URL, as upstream names it: `helm-v3.18.6-linux-amd64.tar.gz`. */
  file: string;
  /** The executable's path inside the archive; undefined for a file that is the executable itself (the k3s installer). */
  member: string | undefined;
  bytes: Buffer;
  sha256: string;
}

/**
 * The companion tools as small real executables, packaged the way upstream ships them:
 * helm as `helm-<v>-linux-<arch>.tar.gz` holding `linux-<arch>/helm` (with LICENSE and
 * README.md beside it), liqoctl as `liqoctl-linux-<arch>.tar.gz` holding `liqoctl` and
 * LICENSE at the top. Each is a POSIX shell script that answers `version` the way the
 * real tool does, so a version check after an install works for real.
 */
export async function buildArtifacts(versions: {
  helm: string;
  liqoctl: string;
  k3s?: string;
}): Promise<ServedArtifact[]> {
  const work = await mkdtemp(join(tmpdir(), "noderings-emulator-artifacts-"));
  try {
    const out: ServedArtifact[] = [];
    for (const arch of ["amd64", "arm64", "arm"] as const) {
      out.push(
        await pack(work, {
          tool: "helm",
          version: versions.helm,
          arch,
          file: `helm-${versions.helm}-linux-${arch}.tar.gz`,
          member: `linux-${arch}/helm`,
          script: helmScript(versions.helm, arch),
          extras: [`linux-${arch}/LICENSE`, `linux-${arch}/README.md`],
        }),
      );
    }
    for (const arch of ["amd64", "arm64"] as const) {
      out.push(
        await pack(work, {
          tool: "liqoctl",
          version: versions.liqoctl,
          arch,
          file: `liqoctl-linux-${arch}.tar.gz`,
          member: "liqoctl",
          script: liqoctlScript(versions.liqoctl, arch),
          extras: ["LICENSE"],
        }),
      );
    }
    if (versions.k3s !== undefined) {
      // The k3s installer is one script for every architecture, as upstream publishes it
      // (install.sh at the release's tag); the pins name it per architecture all the same.
      const bytes = Buffer.from(k3sInstallerScript(versions.k3s));
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      for (const arch of ["amd64", "arm64", "arm"] as const) {
        out.push({
          tool: "k3s-install",
          version: versions.k3s,
          arch,
          file: "install.sh",
          member: undefined,
          bytes,
          sha256,
        });
      }
    }
    return out;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function k3sInstallerScript(version: string): string {
  return `#!/bin/sh
# The k3s installer for ${version}, a stand-in served by the NodeRings emulator: it installs nothing.
echo "k3s installer (NodeRings emulator stand-in): nothing is installed on this machine" >&2
exit 1
`;
}

async function pack(
  work: string,
  spec: Omit<ServedArtifact, "bytes" | "sha256"> & { script: string; extras: string[] },
): Promise<ServedArtifact> {
  const root = join(work, `${spec.tool}-${spec.arch}`);
  const executable = join(root, spec.member ?? spec.file);
  await mkdir(dirname(executable), { recursive: true });
  await writeFile(executable, spec.script);
  await chmod(executable, 0o755);
  for (const extra of spec.extras) {
    await writeFile(
      join(root, extra),
      extra.endsWith("LICENSE")
        ? "Apache License, Version 2.0 (emulated artifact)\n"
        : "Served by the NodeRings emulator.\n",
    );
  }
  const member = spec.member ?? spec.file;
  const entries = [...new Set([member, ...spec.extras].map((path) => path.split("/")[0] ?? path))];
  const chunks: Buffer[] = [];
  for await (const chunk of create({ gzip: true, cwd: root, portable: true, mtime: new Date(0) }, entries)) {
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  const bytes = Buffer.concat(chunks);
  const { script: _script, extras: _extras, ...rest } = spec;
  return { ...rest, bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}

function helmScript(version: string, arch: string): string {
  const commit = createHash("sha1").update(`helm ${version}`).digest("hex");
  return `#!/bin/sh
# helm ${version} (linux/${arch}), a stand-in served by the NodeRings emulator: only "version" works.
if [ "$1" = "version" ]; then
  shift
  for arg in "$@"; do
    case "$arg" in
      --short) echo "${version}+g${commit.slice(0, 7)}"; exit 0 ;;
      --template=*|--template) echo "${version}"; exit 0 ;;
    esac
  done
  echo 'version.BuildInfo{Version:"${version}", GitCommit:"${commit}", GitTreeState:"clean", GoVersion:"go1.24.6"}'
  exit 0
fi
echo "helm (NodeRings emulator stand-in): only 'helm version' is emulated" >&2
exit 1
`;
}

function liqoctlScript(version: string, arch: string): string {
  return `#!/bin/sh
# liqoctl ${version} (linux/${arch}), a stand-in served by the NodeRings emulator: only "version" works.
if [ "$1" = "version" ]; then
  echo "Client version: ${version}"
  case " $* " in *" --client "*) exit 0 ;; esac
  echo "Server version: Unknown"
  exit 0
fi
echo "liqoctl (NodeRings emulator stand-in): only 'liqoctl version' is emulated" >&2
exit 1
`;
}

/**
 * The pin set the emulator serves: the shipped defaults, with helm and liqoctl downloadable
 * from the emulator itself, and the k3s installer as the related tool `k3s-install` when
 * it serves one.
 */
export function servedPins(baseUrl: string, artifacts: ServedArtifact[]): PinSet {
  const pins: PinSet = structuredClone(DEFAULT_PINS);
  pins.name = `emulator-${pins.tools.k3s.version}`;
  const installers = artifacts.filter((artifact) => artifact.tool === "k3s-install");
  if (installers[0] !== undefined) {
    pins.tools["k3s-install"] = {
      version: installers[0].version,
      artifacts: Object.fromEntries(
        installers.map((artifact) => [
          artifact.arch,
          {
            url: artifactUrl(baseUrl, artifact),
            sha256: artifact.sha256,
            format: "binary" as const,
            size: artifact.bytes.length,
          },
        ]),
      ),
    };
  }
  for (const tool of ["helm", "liqoctl"] as const) {
    const own = artifacts.filter((artifact) => artifact.tool === tool);
    pins.tools[tool] = {
      version: own[0]?.version ?? pins.tools[tool].version,
      artifacts: Object.fromEntries(
        own.map((artifact) => [
          artifact.arch,
          {
            url: artifactUrl(baseUrl, artifact),
            sha256: artifact.sha256,
            format: "tar.gz" as const,
            member: artifact.member ?? artifact.file,
            size: artifact.bytes.length,
          },
        ]),
      ),
    };
  }
  return pins;
}

export const artifactUrl = (baseUrl: string, artifact: Pick<ServedArtifact, "tool" | "version" | "file">) =>
  `${baseUrl}/artifacts/${artifact.tool}/${artifact.version}/${artifact.file}`;
