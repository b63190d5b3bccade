import { UserError } from "@nodekit/errors";
import { isDigest } from "./digest.ts";
import { errorCodes } from "./errors.ts";

/** A parsed OCI reference: `registry/repository[:tag][@digest]`. */
export interface Reference {
  /** Host and optional port, as written: `registry.example.com`, `127.0.0.1:5000`. */
  readonly registry: string;
  /** The repository path: `nvke/release`. */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

// The distribution spec's grammar: path components, tags and digests.
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$/;

function invalid(text: string, why: string): UserError {
  return new UserError(errorCodes.OCI_INVALID_REFERENCE, `${JSON.stringify(text)} is not an OCI reference`, {
    why,
    next: "Write it as registry/repository:tag or registry/repository@sha256:<hex>, e.g. registry.example.com/nvke/release:1.4.0.",
  });
}

/**
 * Parse `registry/repository[:tag][@digest]` (an `oci://` prefix, as helm writes it, is
 * allowed). The registry must be named: there is no default registry.
 */
export function parseReference(text: string): Reference {
  const bare = text.startsWith("oci://") ? text.slice("oci://".length) : text;
  const slash = bare.indexOf("/");
  if (slash <= 0) throw invalid(text, "it names no registry host before the repository");
  const registry = bare.slice(0, slash);
  if (!HOST.test(registry)) throw invalid(text, `${JSON.stringify(registry)} is not a registry host[:port]`);
  let rest = bare.slice(slash + 1);
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!isDigest(digest)) throw invalid(text, `${JSON.stringify(digest)} is not a sha256 or sha512 digest`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw invalid(text, `${JSON.stringify(tag)} is not a valid tag`);
  }
  if (rest === "" || !rest.split("/").every((component) => COMPONENT.test(component))) {
    throw invalid(text, `${JSON.stringify(rest)} is not a repository name (lowercase letters, digits, . _ - and /)`);
  }
  return {
    registry,
    repository: rest,
    ...(tag === undefined ? {} : { tag }),
    ...(digest === undefined ? {} : { digest }),
  };
}

/** `registry/repository[:tag][@digest]`, the inverse of {@link parseReference}. */
export function formatReference(reference: Reference): string {
  let out = `${reference.registry}/${reference.repository}`;
  if (reference.tag !== undefined) out += `:${reference.tag}`;
  if (reference.digest !== undefined) out += `@${reference.digest}`;
  return out;
}

/** What a manifest request names: the digest when there is one (it is exact), else the tag. */
export function manifestIdentifier(reference: Reference): string {
  const id = reference.digest ?? reference.tag;
  if (id === undefined) throw invalid(formatReference(reference), "it names neither a tag nor a digest");
  return id;
}
