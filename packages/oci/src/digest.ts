import { createHash } from "node:crypto";

const ALGORITHMS: Record<string, { hex: number }> = { sha256: { hex: 64 }, sha512: { hex: 128 } };
const DIGEST = /^([a-z0-9]+(?:[+._-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$/;

/** Whether `digest` is a digest this client can check (sha256 or sha512, lowercase hex). */
export function isDigest(digest: string): boolean {
  const match = DIGEST.exec(digest);
  if (!match) return false;
  const algorithm = ALGORITHMS[match[1] ?? ""];
  return algorithm !== undefined && match[2]?.length === algorithm.hex && /^[0-9a-f]+$/.test(match[2]);
}

/** The digest of `bytes` with the algorithm `like` names (sha256 by default). */
export function digestOf(bytes: Uint8Array, like = "sha256:"): string {
  const algorithm = like.slice(0, like.indexOf(":"));
  return `${algorithm}:${createHash(algorithm).update(bytes).digest("hex")}`;
}

/** Whether `bytes` hash to `digest`. */
export function matchesDigest(bytes: Uint8Array, digest: string): boolean {
  return isDigest(digest) && digestOf(bytes, digest) === digest;
}
