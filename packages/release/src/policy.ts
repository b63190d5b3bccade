import { createPublicKey, type KeyObject } from "node:crypto";
import { dirname, resolve } from "node:path";
import { parseYamlWith, readInputFile } from "@nodekit/documents";
import { invalidInput, type Problem, UserError } from "@nodekit/errors";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import * as z from "zod";
import { RELEASE_API_VERSION } from "./description.ts";
import { errorCodes } from "./errors.ts";
import { keyHint } from "./keys.ts";

const pem = z.string().refine(
  (text) => {
    try {
      return createPublicKey(text).type === "public";
    } catch {
      return false;
    }
  },
  { message: "must be a PEM public key (-----BEGIN PUBLIC KEY-----)" },
);

export const releasePolicySchema = z
  .strictObject({
    apiVersion: z.literal(RELEASE_API_VERSION),
    kind: z.literal("ReleasePolicy"),
    /** Keys whose signatures are trusted; a bundle names its key by cosign's hint (base64 SHA-256 of the SPKI DER). */
    trustedKeys: z.array(z.strictObject({ name: z.string().min(1), publicKey: pem })).default([]),
    /** Certificate identities (keyless signing); their CAs come from `trustedRoot`. */
    trustedIdentities: z
      .array(
        z.strictObject({
          /** The OIDC issuer Fulcio wrote into the certificate, exactly or as a regular expression (the whole value must match). */
          issuer: z.string().min(1).optional(),
          issuerRegExp: z.string().min(1).optional(),
          /** The certificate's SAN (an e-mail address or a URI), exactly or as a regular expression (the whole value must match). */
          subject: z.string().min(1).optional(),
          subjectRegExp: z.string().min(1).optional(),
        }),
      )
      .default([]),
    /** A Sigstore trusted_root.json (CAs, transparency logs, timestamp authorities), relative to the policy file. */
    trustedRoot: z.string().min(1).optional(),
    /** `required`: at least one transparency-log entry, verified offline against the trusted root's logs. `none`: accepted without one. */
    transparencyLog: z.enum(["required", "none"]),
    /** `required`: at least one verified timestamp (RFC 3161, or the log's). `none`: accepted without one. */
    timestamps: z.enum(["required", "none"]),
  })
  .superRefine((policy, ctx) => {
    if (policy.trustedKeys.length === 0 && policy.trustedIdentities.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["trustedKeys"],
        message: "the policy trusts nobody: list trustedKeys or trustedIdentities",
      });
    }
    policy.trustedIdentities.forEach((identity, i) => {
      for (const [exact, pattern] of [
        ["subject", "subjectRegExp"],
        ["issuer", "issuerRegExp"],
      ] as const) {
        if ((identity[exact] === undefined) === (identity[pattern] === undefined)) {
          ctx.addIssue({
            code: "custom",
            path: ["trustedIdentities", i],
            message: `needs exactly one of ${exact} and ${pattern}`,
          });
        }
        const source = identity[pattern];
        if (source !== undefined) {
          try {
            new RegExp(source);
          } catch {
            ctx.addIssue({
              code: "custom",
              path: ["trustedIdentities", i, pattern],
              message: "is not a valid regular expression",
            });
          }
        }
      }
    });
    if (policy.trustedRoot === undefined) {
      const needs =
        policy.trustedIdentities.length > 0
          ? "with trustedIdentities: it holds the CAs that issue them"
          : policy.timestamps === "required"
            ? "with timestamps: required: it holds the timestamp authorities a timestamp is checked against"
            : policy.transparencyLog === "required"
              ? "with transparencyLog: required: it holds the logs an entry is checked against"
              : undefined;
      if (needs !== undefined) ctx.addIssue({ code: "custom", path: ["trustedRoot"], message: `is required ${needs}` });
    }
    if (policy.trustedIdentities.length > 0) {
      if (policy.transparencyLog === "none" && policy.timestamps === "none") {
        ctx.addIssue({
          code: "custom",
          path: ["timestamps"],
          message:
            "a certificate is checked at the time it signed: with trustedIdentities, require timestamps or the transparency log",
        });
      }
    }
  });

export type ReleasePolicyDocument = z.output<typeof releasePolicySchema>;

/** A parsed policy with its keys and trusted root loaded: what {@link verifyRelease} takes. */
export interface ReleasePolicy {
  readonly source: string;
  readonly keys: ReadonlyArray<{ name: string; hint: string; key: KeyObject }>;
  readonly identities: ReleasePolicyDocument["trustedIdentities"];
  readonly trustedRoot?: TrustedRoot;
  readonly transparencyLog: "required" | "none";
  readonly timestamps: "required" | "none";
}

/** Parse a policy file's text. Never throws: problems come back with line and field path. */
export function parseReleasePolicy(
  text: string,
  options: { source: string },
): { value?: ReleasePolicyDocument; problems: Problem[] } {
  return parseYamlWith(releasePolicySchema, text, { source: options.source, fileKind: "a release policy" });
}

/** The policy at `source` cannot be used: these problems, and nothing was verified. */
function policyInvalid(source: string, problems: Problem[]): UserError {
  return invalidInput(errorCodes.RELEASE_POLICY_INVALID, source, problems, undefined, "nothing was verified");
}

/** policyInvalid with one problem of the policy file's. */
function policyProblem(source: string, problem: Omit<Problem, "severity" | "source">): UserError {
  return policyInvalid(source, [{ severity: "error", source, ...problem }]);
}

/** Build the policy from a parsed document; `trustedRootText` is the trusted root file's content, when it names one. */
export function buildReleasePolicy(
  document: ReleasePolicyDocument,
  source: string,
  trustedRootText?: string,
): ReleasePolicy {
  let trustedRoot: TrustedRoot | undefined;
  if (trustedRootText !== undefined) {
    try {
      trustedRoot = TrustedRoot.fromJSON(JSON.parse(trustedRootText));
    } catch (error) {
      throw policyProblem(source, {
        path: ["trustedRoot"],
        message: `names a file that is not a Sigstore trusted root (${error instanceof Error ? error.message : String(error)})`,
      });
    }
  }
  return {
    source,
    keys: document.trustedKeys.map((k) => ({
      name: k.name,
      hint: keyHint(k.publicKey),
      key: createPublicKey(k.publicKey),
    })),
    identities: document.trustedIdentities,
    ...(trustedRoot === undefined ? {} : { trustedRoot }),
    transparencyLog: document.transparencyLog,
    timestamps: document.timestamps,
  };
}

/** Read, parse and load a policy file (and the trusted root it names, relative to it). */
export async function loadReleasePolicy(path: string, options: { source?: string } = {}): Promise<ReleasePolicy> {
  const source = options.source ?? path;
  let text: string;
  try {
    text = (await readInputFile(path, { source, what: "release policy" })).toString("utf8");
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw policyProblem(source, {
      message: `could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    });
  }
  const parsed = parseReleasePolicy(text, { source });
  if (parsed.value === undefined) {
    throw policyInvalid(source, parsed.problems);
  }
  let rootText: string | undefined;
  if (parsed.value.trustedRoot !== undefined) {
    const rootPath = resolve(dirname(path), parsed.value.trustedRoot);
    try {
      rootText = (await readInputFile(rootPath, { what: "the trusted root" })).toString("utf8");
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw policyProblem(source, {
        path: ["trustedRoot"],
        value: parsed.value.trustedRoot,
        message: "names a file that could not be read",
      });
    }
  }
  return buildReleasePolicy(parsed.value, source, rootText);
}
