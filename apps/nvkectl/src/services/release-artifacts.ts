import { resolve } from "node:path";
import { readInputFile } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import type { OciClient } from "@nodekit/oci";
import type { Redactor } from "@nodekit/process";
import type { VerifiedRelease } from "@nodekit/release";
import { errorCodes } from "../errors.ts";
import { writeOutputFile } from "./files.ts";

/** How nvkectl reaches a registry: credentials from the environment or docker's/helm's config, never argv. */
export interface RegistryAccess {
  /** Talk plain HTTP (a loopback or lab registry without TLS). */
  plainHttp?: boolean | undefined;
  /** A PEM file of extra CA certificates to trust (a registry with a private CA). */
  caFile?: string | undefined;
  /** Hosts a registry's token realm may be on besides the registry's own (--allow-token-realm). */
  allowTokenRealms?: readonly string[] | undefined;
  /** Warnings for stderr (an allowed token realm used). */
  warn?: ((message: string) => void) | undefined;
  /** Default process.env: NODEKIT_REGISTRY_USERNAME / _PASSWORD (/ _HOST), DOCKER_CONFIG, HELM_REGISTRY_CONFIG. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Every password and token the client uses is registered here before it is sent. */
  redactor: Redactor;
}

/** An OCI client with the user's registry credentials; `@nodekit/oci` is loaded only when a command needs it. */
export async function openRegistry(access: RegistryAccess): Promise<OciClient> {
  const { OciClient, defaultCredentials } = await import("@nodekit/oci");
  const env = access.env ?? process.env;
  let ca: string | undefined;
  if (access.caFile !== undefined) {
    try {
      ca = (
        await readInputFile(resolve(access.cwd ?? process.cwd(), access.caFile), {
          source: access.caFile,
          what: "the CA file",
        })
      ).toString("utf8");
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw new UserError(errorCodes.REGISTRY_CA_UNREADABLE, `the CA file ${access.caFile} cannot be read`, {
        why: (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : String(error),
        next: "name a PEM file of CA certificates with --ca-file",
      });
    }
  }
  // The registry password from the environment is a secret before any request is made.
  access.redactor.add(env.NODEKIT_REGISTRY_PASSWORD, "NODEKIT_REGISTRY_PASSWORD");
  return new OciClient({
    plainHttp: access.plainHttp ?? false,
    credentials: defaultCredentials({ env, ...(env.HOME ? { homedir: env.HOME } : {}) }),
    secrets: access.redactor,
    ...(ca === undefined ? {} : { ca }),
    ...(access.allowTokenRealms === undefined ? {} : { allowTokenRealms: access.allowTokenRealms }),
    ...(access.warn === undefined ? {} : { onWarning: access.warn }),
  });
}

export interface VerifyReleaseInputs {
  /** `registry/repository:tag` or `…@sha256:…`. */
  reference: string;
  policyFile: string;
  access: RegistryAccess;
}

/** `nvkectl release verify`: the policy first (a malformed one verifies nothing), then the release, offline. */
export async function verifyPublishedRelease(inputs: VerifyReleaseInputs): Promise<VerifiedRelease> {
  const { loadReleasePolicy, verifyRelease } = await import("@nodekit/release");
  const policy = await loadReleasePolicy(resolve(inputs.access.cwd ?? process.cwd(), inputs.policyFile), {
    source: inputs.policyFile,
  });
  const client = await openRegistry(inputs.access);
  return verifyRelease({ client, reference: inputs.reference, policy });
}

export interface ExportReleaseInputs {
  reference: string;
  /** Write here (atomically, 0644) instead of returning the text for stdout. */
  outputFile?: string | undefined;
  /** `--force`: replace an --output-file another user owns. */
  force?: boolean | undefined;
  /** `--nvkectl PLATFORM`: write nvkectl's executable for it (to outputFile) instead of the description. */
  nvkectl?: string | undefined;
  access: RegistryAccess;
}

export interface ExportedRelease {
  /** `registry/repository@sha256:…` the description was read from. */
  reference: string;
  /** The description exactly as published. */
  text: string;
  writtenTo?: string;
  /** With `nvkectl`: the digest of the executable written (its file's sha256). */
  executable?: string;
}

/** The nvkectl artifact's layer type (`pnpm package`'s file, or a publisher's own build). */
const NVKECTL_BINARY = "application/vnd.nodekit.nvkectl.binary.v1";

/**
 * nvkectl's executable for `platform` as the release lists it: its artifact's manifest read
 * by the digest the description pins, then its one binary layer, each checked against its
 * digest (the blob is held in memory: at most the client's blob cap, 512 MiB).
 */
async function nvkectlExecutable(
  client: OciClient,
  description: VerifiedRelease["description"],
  platform: string,
  reference: string,
): Promise<{ bytes: Uint8Array; digest: string }> {
  const { listedArtifacts } = await import("@nodekit/release");
  const index = description.nvkectl.findIndex((n) => n.platform === platform);
  // Its repository and digest as the content check reads them (no `oci://`, no tag).
  const listed = listedArtifacts(description).find((a) => a.field === `nvkectl[${index}]`);
  const absent = (why: string) =>
    new UserError(errorCodes.RELEASE_PLATFORM_NOT_LISTED, `${reference} carries no nvkectl for ${platform}`, {
      why,
      next: `Name one of the platforms it lists: ${description.nvkectl.map((n) => n.platform).join(", ")}.`,
      facts: { platform },
    });
  if (listed === undefined) {
    throw absent(`Its description lists nvkectl for ${description.nvkectl.map((n) => n.platform).join(", ")} only.`);
  }
  const { repository } = listed;
  const { manifest } = await client.getManifest(`${repository}@${listed.digest}`);
  const layers = Array.isArray(manifest.layers)
    ? (manifest.layers as Array<{ mediaType?: unknown; digest?: unknown }>)
    : [];
  const layer = layers.find((l) => l.mediaType === NVKECTL_BINARY) ?? (layers.length === 1 ? layers[0] : undefined);
  if (typeof layer?.digest !== "string") {
    throw absent(`Its artifact ${repository}@${listed.digest} has no ${NVKECTL_BINARY} layer.`);
  }
  return { bytes: await client.getBlob(repository, layer.digest), digest: layer.digest };
}

/** `nvkectl release export`: the description as published (each read checked against its digest); no signature is checked. */
export async function exportRelease(inputs: ExportReleaseInputs): Promise<ExportedRelease> {
  const { fetchRelease } = await import("@nodekit/release");
  const client = await openRegistry(inputs.access);
  const release = await fetchRelease({ client, reference: inputs.reference });
  const text = new TextDecoder().decode(release.bytes);
  if (inputs.nvkectl !== undefined && inputs.outputFile !== undefined) {
    const executable = await nvkectlExecutable(client, release.description, inputs.nvkectl, release.reference);
    const path = resolve(inputs.access.cwd ?? process.cwd(), inputs.outputFile);
    await writeOutputFile(path, executable.bytes, {
      mode: 0o755,
      force: inputs.force,
      what: `nvkectl for ${inputs.nvkectl}`,
    });
    return { reference: release.reference, text, writtenTo: inputs.outputFile, executable: executable.digest };
  }
  if (inputs.outputFile === undefined) return { reference: release.reference, text };
  const path = resolve(inputs.access.cwd ?? process.cwd(), inputs.outputFile);
  await writeOutputFile(path, text, { mode: 0o644, force: inputs.force, what: "the release description" });
  return { reference: release.reference, text, writtenTo: inputs.outputFile };
}
