import { type Problem, UserError } from "@nodekit/errors";
import * as z from "zod";
import { isDigest } from "./digest.ts";
import { errorCodes } from "./errors.ts";
import { MediaType } from "./media-types.ts";

// The shape of what a registry serves as a manifest, as the image spec defines it: checked
// before anything reads a field of it, so that a manifest whose `layers` is not a list (or
// whose descriptors are not descriptors) is a located problem, not a crash of whoever reads it.
// Unknown fields are kept (the specs allow them); unknown manifest media types are only JSON objects.

const DescriptorSchema = z.looseObject({
  mediaType: z.string(),
  digest: z.string().refine(isDigest, "must be a sha256 or sha512 digest"),
  size: z.number().int().nonnegative(),
  artifactType: z.string().optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

const ImageManifestSchema = z.looseObject({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  artifactType: z.string().optional(),
  config: DescriptorSchema,
  layers: z.array(DescriptorSchema),
  subject: DescriptorSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

const IndexSchema = z.looseObject({
  schemaVersion: z.literal(2),
  mediaType: z.string().optional(),
  artifactType: z.string().optional(),
  manifests: z.array(DescriptorSchema),
  subject: DescriptorSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

const ArtifactManifestSchema = z.looseObject({
  mediaType: z.string(),
  artifactType: z.string().optional(),
  blobs: z.array(DescriptorSchema).optional(),
  subject: DescriptorSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

const SCHEMAS: Record<string, z.ZodType> = {
  [MediaType.ImageManifest]: ImageManifestSchema,
  [MediaType.DockerManifest]: ImageManifestSchema,
  [MediaType.ImageIndex]: IndexSchema,
  [MediaType.DockerManifestList]: IndexSchema,
  [MediaType.ArtifactManifest]: ArtifactManifestSchema,
};

/**
 * The manifest as served, checked against the image spec's shape for its media type (its own
 * `mediaType` field, else the one it was served as): OCI_MANIFEST_INVALID, with every problem
 * and its field path, when it does not have that shape. Never quotes a value back.
 */
export function checkManifest(
  manifest: Readonly<Record<string, unknown>>,
  servedAs: string | undefined,
  what: string,
): Readonly<Record<string, unknown>> {
  const mediaType = typeof manifest.mediaType === "string" ? manifest.mediaType : servedAs;
  const schema = mediaType === undefined ? undefined : SCHEMAS[mediaType];
  if (schema === undefined) return manifest;
  const result = schema.safeParse(manifest);
  if (result.success) return manifest;
  const problems: Problem[] = result.error.issues.map((issue) => ({
    severity: "error",
    source: what,
    path: issue.path.map(String),
    message: issue.message,
  }));
  return invalid(what, mediaType ?? "", problems);
}

function invalid(what: string, mediaType: string, problems: Problem[]): never {
  throw new UserError(
    errorCodes.OCI_MANIFEST_INVALID,
    `the ${what} is not a valid ${mediaType} (${problems.length} ${problems.length === 1 ? "problem" : "problems"})`,
    {
      why: "Its content hashes to its digest, but it does not have the shape the image spec gives that media type, so nothing in it was used.",
      next: "Ask the publisher to push a valid manifest; if it was valid when pushed, the registry's storage has been changed.",
      problems,
    },
  );
}
