import { type Problem, UserError } from "@nodekit/errors";
import { type Descriptor, type OciClient, ociErrorCodes, parseReference, type Reference } from "@nodekit/oci";
import PQueue from "p-queue";
import type { ListedArtifact } from "./description.ts";
import { errorCodes } from "./errors.ts";

// A release's artifacts checked by their content, not their presence: each artifact's manifest
// (hashed as it is read), the manifests an index lists, and every blob they reference (config,
// layers), each hashed as it streams, a chunk in memory at a time. What helm, clusterctl and the
// site's container runtime would pull is exactly what was hashed here.

/** What the content check found. */
export interface ContentReport {
  /** Artifacts (or content they reference) the registry does not have. */
  readonly missing: ContentFailure[];
  /** Artifacts whose content does not hash to its digest. */
  readonly corrupt: ContentFailure[];
  /** Distinct blobs hashed, and their bytes. */
  readonly blobs: number;
  readonly bytes: number;
}

export interface ContentFailure {
  readonly artifact: ListedArtifact;
  /** What of it: `its manifest`, `layer 0 (sha256:…)`, `manifest 1 of its index (sha256:…)`, … */
  readonly part: string;
  /** The registry's own sentence: what it lacks, or what the content hashes to. */
  readonly reason: string;
}

export interface ContentCheckOptions {
  /** Reads in flight at once, manifests and blobs together (a blob's read starts once its manifest is read); default 16. */
  concurrency?: number;
  /** How deep an index of indexes is followed; default 2. */
  maxDepth?: number;
}

interface BlobUse {
  ref: Reference;
  descriptor: Descriptor;
  users: Array<{ artifact: ListedArtifact; part: string }>;
  /** Its read: the bytes hashed, or what went wrong (recorded for every user once all is read). */
  read: Promise<{ size: number } | { error: unknown }>;
}

/** Layers that are never pushed to a registry (Windows base layers): their content is elsewhere. */
const nonDistributable = (mediaType: string) => /nondistributable|foreign/.test(mediaType);

/**
 * At most `limit` reads in flight, manifests and blobs alike; the others wait their turn in
 * order, a blob's read before any manifest's: the bytes to hash flow from the first manifest
 * read on, rather than after every manifest was read. (p-queue starts the waiter of highest
 * priority first, in the order they came within one priority.)
 */
function limiter(limit: number) {
  const queue = new PQueue({ concurrency: limit });
  return <T>(kind: "blob" | "manifest", fn: () => Promise<T>): Promise<T> =>
    queue.add(fn, { priority: kind === "blob" ? 1 : 0 });
}

const kindOf = (error: unknown): "missing" | "corrupt" | undefined => {
  if (!(error instanceof UserError)) return undefined;
  if (error.code === ociErrorCodes.OCI_NOT_FOUND.code) return "missing";
  if (error.code === ociErrorCodes.OCI_DIGEST_MISMATCH.code || error.code === ociErrorCodes.OCI_MANIFEST_INVALID.code)
    return "corrupt";
  return undefined;
};

const reasonOf = (error: UserError) => (error.why ? `${error.message}: ${error.why}` : error.message);

/**
 * Hash every byte of every artifact: their manifests, the manifests of an index, and each
 * distinct blob once (streamed). Registry failures other than "not there" and "not that
 * content" (unreachable, refused credentials) are thrown as the client's errors.
 */
export async function checkArtifactContent(
  client: OciClient,
  artifacts: readonly ListedArtifact[],
  options: ContentCheckOptions = {},
): Promise<ContentReport> {
  const limit = limiter(options.concurrency ?? 16);
  const maxDepth = options.maxDepth ?? 2;
  const missing: ContentFailure[] = [];
  const corrupt: ContentFailure[] = [];
  const blobs = new Map<string, BlobUse>();
  const record = (error: unknown, artifact: ListedArtifact, part: string) => {
    const kind = kindOf(error);
    if (kind === undefined) throw error;
    (kind === "missing" ? missing : corrupt).push({ artifact, part, reason: reasonOf(error as UserError) });
  };
  const useBlob = (ref: Reference, descriptor: Descriptor, artifact: ListedArtifact, part: string) => {
    if (nonDistributable(descriptor.mediaType)) return;
    const key = `${ref.registry}/${ref.repository}@${descriptor.digest}`;
    let use = blobs.get(key);
    if (use === undefined) {
      // Read as soon as it is known (the registry is asked while other manifests are read).
      const read = limit("blob", () => client.verifyBlob(ref, descriptor.digest, { size: descriptor.size })).catch(
        (error: unknown) => ({ error }),
      );
      use = { ref, descriptor, users: [], read };
      blobs.set(key, use);
    }
    use.users.push({ artifact, part });
  };

  // Manifests: the artifact's own, then what an index lists.
  const walk = async (artifact: ListedArtifact, ref: Reference, part: string, depth: number): Promise<void> => {
    const descriptors = (manifest: Readonly<Record<string, unknown>>, key: string): Descriptor[] => {
      const value = manifest[key];
      return Array.isArray(value) ? (value as Descriptor[]) : [];
    };
    let children: Descriptor[];
    try {
      // Its blobs are queued before the read gives up its slot, so they take it ahead of the manifests waiting.
      children = await limit("manifest", async () => {
        const { manifest } = await client.getManifest(ref);
        const config = manifest.config as Descriptor | undefined;
        if (config !== undefined) useBlob(ref, config, artifact, `the config (${config.digest}) of ${part}`);
        for (const [i, d] of descriptors(manifest, "layers").entries())
          useBlob(ref, d, artifact, `layer ${i} (${d.digest}) of ${part}`);
        for (const [i, d] of descriptors(manifest, "blobs").entries())
          useBlob(ref, d, artifact, `blob ${i} (${d.digest}) of ${part}`);
        return descriptors(manifest, "manifests");
      });
    } catch (error) {
      record(error, artifact, part);
      return;
    }
    if (children.length > 0 && depth >= maxDepth) {
      corrupt.push({ artifact, part, reason: `it nests indexes deeper than ${maxDepth} levels` });
      return;
    }
    await Promise.all(
      children.map((child, i) =>
        walk(artifact, { ...ref, digest: child.digest }, `manifest ${i} (${child.digest}) of ${part}`, depth + 1),
      ),
    );
  };
  await Promise.all(
    artifacts.map((artifact) =>
      walk(artifact, parseReference(`${artifact.repository}@${artifact.digest}`), "its manifest", 0),
    ),
  );

  // Every blob was found by now, and its read started; each failure is recorded for each user.
  let bytes = 0;
  for (const use of blobs.values()) {
    const outcome = await use.read;
    if ("error" in outcome) for (const user of use.users) record(outcome.error, user.artifact, user.part);
    else bytes += outcome.size;
  }
  return { missing, corrupt, blobs: blobs.size, bytes };
}

function problemsOf(failures: readonly ContentFailure[], source: string, message: (f: ContentFailure) => string) {
  return failures.map(
    (failure): Problem => ({
      severity: "error",
      source,
      path: failure.artifact.field
        .split(/[.[\]]+/)
        .filter(Boolean)
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
      value: `${failure.artifact.repository}@${failure.artifact.digest}`,
      message: message(failure),
    }),
  );
}

const named = (artifact: ListedArtifact) => `${artifact.field} ${artifact.repository}@${artifact.digest}`;

/**
 * The report as the release's failure: RELEASE_ARTIFACT_CORRUPT when any content does not
 * hash to its digest (naming the first artifact, every one in its problems), else
 * RELEASE_ARTIFACT_MISSING when some is not there; nothing when everything was.
 */
export function assertContent(
  report: ContentReport,
  artifacts: readonly ListedArtifact[],
  release: { reference: string; digest?: string },
  nothingDone?: string,
): void {
  const source = `${release.reference} (release description)`;
  const tail = nothingDone === undefined ? "" : `; ${nothingDone}`;
  const first = report.corrupt[0];
  if (first !== undefined) {
    const count = new Set(report.corrupt.map((f) => f.artifact.field)).size;
    throw new UserError(
      errorCodes.RELEASE_ARTIFACT_CORRUPT,
      `${count === 1 ? `the content of ${named(first.artifact)}` : `the content of ${count} of the ${artifacts.length} artifacts ${release.reference} lists, ${named(first.artifact)} first,`} does not match its digest${tail}`,
      {
        why: `${first.part}: ${first.reason}`,
        problems: [
          ...problemsOf(report.corrupt, source, (f) => `${f.part} does not match its digest (${f.reason})`),
          ...problemsOf(report.missing, source, (f) => `${f.part} is not in the registry`),
        ],
        next: "Do not install it: what the registry serves is not what was signed. Ask the registry's operator to check its storage, or push the release again from its source.",
        facts: {
          ...(release.digest === undefined ? {} : { digest: release.digest }),
          corrupt: count,
          artifact: first.artifact.field,
        },
      },
    );
  }
  if (report.missing.length > 0) {
    const fields = [...new Set(report.missing.map((f) => f.artifact.field))];
    throw new UserError(
      errorCodes.RELEASE_ARTIFACT_MISSING,
      `${fields.length} of the ${artifacts.length} artifacts ${release.reference} lists ${fields.length === 1 ? "is" : "are"} not in the registry at ${fields.length === 1 ? "its digest" : "their digests"}${tail}`,
      {
        problems: problemsOf(report.missing, source, (f) =>
          f.part === "its manifest" ? "is not in the registry" : `${f.part} is not in the registry`,
        ),
        next: "Do not install it. Ask the publisher to push the missing artifacts, or check that the registry is the one the release was published to.",
        facts: { ...(release.digest === undefined ? {} : { digest: release.digest }), missing: fields.length },
      },
    );
  }
}
