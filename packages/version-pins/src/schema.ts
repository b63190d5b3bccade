import * as z from "zod";

// A pin set is the combination of versions NodeRings has validated together: what
// `nr cluster register` installs (k3s, Calico, Liqo, the operator chart) and the
// companion tools it may download (helm, liqoctl), each downloadable tool with a URL and
// a sha256 digest per architecture. The NodeRings API serves it (GET /api/v1/pins) and
// this package ships offline defaults of the same shape.

/** The newest pin-set format this package reads. A newer one is refused with a message saying so. */
export const PIN_SET_SCHEMA_VERSION = 1;

/** The CPU architectures a provider VM may have, as Go, k3s and Liqo name them. */
export const ARCHITECTURES = ["amd64", "arm64", "arm"] as const;
export const ArchSchema = z.enum(ARCHITECTURES);
export type Arch = z.infer<typeof ArchSchema>;

/** The tools every pin set names. A pin set may name more ("related tools"), each under a name of its own. */
export const REQUIRED_TOOLS = ["k3s", "calico", "liqo", "helm", "liqoctl", "proxmox-operator"] as const;
export type RequiredTool = (typeof REQUIRED_TOOLS)[number];
/** A tool's name in a pin set: one of {@link REQUIRED_TOOLS} or a related tool's DNS label. */
export type ToolName = RequiredTool | (string & {});

const TOOL_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SEMVER = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const V_SEMVER = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const K3S_VERSION = /^v\d+\.\d+\.\d+(-rc\d+)?\+k3s\d+$/;
const SHA256 = /^[a-f0-9]{64}$/;

/** A URL to download from: https, or plain http to a loopback address only (a local mirror, the emulator). */
export const DownloadUrlSchema = z.string().refine(isDownloadUrl, {
  message: "must be an https:// URL (plain http:// only to 127.0.0.1, ::1 or localhost)",
});

/** The pins' rule for a download URL (and every redirect hop of one): https, or plain http to loopback; no credentials. */
export function isDownloadUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.username !== "" || url.password !== "") return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
}

/** A lower-case hex sha256 digest of the file as downloaded (the archive, for a tar.gz). */
export const Sha256Schema = z.string().regex(SHA256, "must be a sha256 digest: 64 lower-case hex digits");

/**
 * One downloadable file of a tool for one architecture. `format` says how the executable
 * is packaged: `tar.gz` (helm: `linux-amd64/helm` inside; liqoctl: `liqoctl` inside) or
 * `binary` (the file is the executable). The digest is optional in the document so that
 * a pin set may name a URL it has no digest for; such an artifact is never downloaded
 * (see `requireArtifact`).
 */
export const ArtifactSchema = z
  .strictObject({
    url: DownloadUrlSchema,
    sha256: Sha256Schema.optional(),
    format: z.enum(["tar.gz", "binary"]),
    /** The executable's path inside a tar.gz. */
    member: z
      .string()
      .min(1, "must not be empty")
      .refine((path) => !path.startsWith("/") && !path.split("/").includes(".."), {
        message: "must be a relative path inside the archive, without '..'",
      })
      .optional(),
    /** The size in bytes, when the platform knows it: a download of another size is refused before hashing. */
    size: z.int().positive().optional(),
  })
  .superRefine((artifact, ctx) => {
    if (artifact.format === "tar.gz" && artifact.member === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["member"],
        message: "is required for a tar.gz: the executable's path inside it",
      });
    }
    if (artifact.format === "binary" && artifact.member !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["member"],
        message: "is only for a tar.gz; a binary is the executable itself",
      });
    }
  });
export type Artifact = z.infer<typeof ArtifactSchema>;

/** A Helm chart a pin installs (the operator): an OCI or HTTP(S) chart repository and the chart's name in it. */
export const ChartSchema = z.strictObject({
  repository: z
    .string()
    .regex(/^(oci|https):\/\/[^\s/]+(\/[^\s]*)?$/, "must be an oci:// or https:// chart repository"),
  name: z.string().regex(TOOL_NAME, "must be a chart name: lower case letters, digits and '-'"),
});
export type Chart = z.infer<typeof ChartSchema>;

function pinSchema(version: z.ZodString) {
  return z.strictObject({
    version,
    /** Per-architecture downloads, for the tools nr may download (helm, liqoctl). */
    artifacts: z.partialRecord(ArchSchema, ArtifactSchema).optional(),
    /** The chart, for a tool installed with Helm (proxmox-operator). */
    chart: ChartSchema.optional(),
  });
}

const anyVersion = z.string().regex(SEMVER, "must be a version such as v1.2.3 or 1.2.3");
export const PinSchema = pinSchema(anyVersion);
export type Pin = z.infer<typeof PinSchema>;

const ToolsSchema = z
  .object({
    k3s: pinSchema(z.string().regex(K3S_VERSION, "must be a k3s version such as v1.33.5+k3s1")),
    calico: pinSchema(z.string().regex(V_SEMVER, "must be a Calico version such as v3.30.3")),
    liqo: pinSchema(z.string().regex(V_SEMVER, "must be a Liqo version such as v1.0.1")),
    helm: pinSchema(z.string().regex(/^v3\.\d+\.\d+$/, "must be a Helm 3 version such as v3.18.6")),
    liqoctl: pinSchema(z.string().regex(V_SEMVER, "must be a liqoctl version such as v1.0.1")),
    "proxmox-operator": pinSchema(anyVersion),
  })
  .catchall(PinSchema)
  .superRefine((tools, ctx) => {
    for (const name of Object.keys(tools)) {
      if (!TOOL_NAME.test(name) || name.length > 63) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "is not a tool name: lower case letters, digits and '-'",
        });
      }
    }
    // liqoctl must drive the Liqo it installed: Liqo supports no other pairing.
    if (tools.liqoctl.version !== tools.liqo.version) {
      ctx.addIssue({
        code: "custom",
        path: ["liqoctl", "version"],
        message: `must equal tools.liqo.version (${tools.liqo.version}): liqoctl must match the Liqo release it installs and peers`,
      });
    }
  });

export const PinSetSchema = z.strictObject({
  schemaVersion: z.literal(PIN_SET_SCHEMA_VERSION, {
    error: (issue) =>
      issue.input === undefined
        ? undefined
        : typeof issue.input === "number" && issue.input > PIN_SET_SCHEMA_VERSION
          ? `is newer than this version of the tool reads (${PIN_SET_SCHEMA_VERSION}); update the tool`
          : `must be ${PIN_SET_SCHEMA_VERSION}`,
  }),
  /** The platform's name for this validated combination, e.g. `2025.09-1`; shown in status and recorded in state. */
  name: z.string().min(1, "must not be empty").max(100, "must be at most 100 characters"),
  tools: ToolsSchema,
});
export type PinSet = z.infer<typeof PinSetSchema>;
