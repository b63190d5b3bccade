import type { KeyObject } from "node:crypto";
import { bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import {
  PolicyError,
  type TrustMaterial,
  toSignedEntity,
  toTrustMaterial,
  VerificationError,
  Verifier,
} from "@sigstore/verify";
import { IN_TOTO_PAYLOAD_TYPE } from "./media-types.ts";
import type { ReleasePolicy } from "./policy.ts";

// A Sigstore bundle checked against a release policy. verify.ts loads this module (and
// @sigstore/verify with it, the largest of the package's imports) only when it checks a
// signature, so that the release's other readers (install, upgrade plan) do not load it.
function trustMaterialFor(policy: ReleasePolicy, onlyKey?: KeyObject): TrustMaterial {
  const root =
    policy.trustedRoot ??
    TrustedRoot.fromJSON({
      mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
      tlogs: [],
      certificateAuthorities: [],
      ctlogs: [],
      timestampAuthorities: [],
    });
  return toTrustMaterial(root, (hint: string) => {
    const key = onlyKey ?? policy.keys.find((k) => k.hint === hint)?.key;
    if (key === undefined) {
      throw new VerificationError({ code: "PUBLIC_KEY_ERROR", message: `no trusted key has the hint ${hint}` });
    }
    return { publicKey: key, validFor: () => true };
  });
}

export type Outcome =
  | { ok: true; signer: string }
  | { ok: false; kind: "untrusted" | "invalid" | "unmet"; reason: string };

type Bundle = ReturnType<typeof bundleFromJSON>;
type Identity = ReleasePolicy["identities"][number];

/** What the policy requires of a bundle beyond its signature, and the bundle lacks: named by the setting. */
function missingEvidence(bundle: Bundle, policy: ReleasePolicy): string | undefined {
  const material = bundle.verificationMaterial;
  const tlogEntries = material.tlogEntries ?? [];
  // The bundle as checked (asChecked): under `transparencyLog: none` it has no entries, so a
  // log's integrated time is a timestamp only when the log is required.
  const rfc3161 = material.timestampVerificationData?.rfc3161Timestamps ?? [];
  if (policy.timestamps === "required" && rfc3161.length === 0 && !tlogEntries.some((e) => e.inclusionPromise)) {
    return `it carries no timestamp, and ${policy.source} requires one (timestamps: required)`;
  }
  if (policy.transparencyLog === "required" && tlogEntries.length === 0) {
    return `it carries no transparency-log entry, and ${policy.source} requires one (transparencyLog: required)`;
  }
  return undefined;
}

/**
 * The bundle as the policy has it checked. Under `transparencyLog: none` its log entries are
 * left out: not checked against any log, not counted, their integrated time no timestamp, as
 * cosign's `--insecure-ignore-tlog` and sigstore-go without a log threshold ignore them.
 * @sigstore/verify checks every entry a bundle carries whatever `tlogThreshold` says, so a
 * key-signed bundle logged by cosign's default would otherwise fail against a root naming no
 * log. Under `required` every entry is checked, and one that fails refuses the bundle.
 */
function asChecked(bundle: Bundle, policy: ReleasePolicy): Bundle {
  if (policy.transparencyLog === "required") return bundle;
  return { ...bundle, verificationMaterial: { ...bundle.verificationMaterial, tlogEntries: [] } };
}

/** Exact, or a regular expression the whole value must match (so `.*@nvkr\.example` cannot match a longer name). */
function matches(exact: string | undefined, pattern: string | undefined, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (exact !== undefined) return value === exact;
  return pattern !== undefined && new RegExp(`^(?:${pattern})$`).test(value);
}

const describeIdentity = (identity: Identity) =>
  `${identity.subject ?? `/${identity.subjectRegExp}/`} (issuer ${identity.issuer ?? `/${identity.issuerRegExp}/`})`;

/** Verify one bundle (JSON) against the policy, for the manifest `digest`. Never throws for a bad bundle. */
export function checkBundle(bundleJson: unknown, digest: string, policy: ReleasePolicy): Outcome {
  let bundle: Bundle;
  try {
    bundle = asChecked(bundleFromJSON(bundleJson), policy);
  } catch (error) {
    return { ok: false, kind: "invalid", reason: `the bundle is malformed (${(error as Error).message})` };
  }
  const options = {
    tlogThreshold: policy.transparencyLog === "required" ? 1 : 0,
    timestampThreshold: policy.timestamps === "required" ? 1 : 0,
    ctlogThreshold: policy.transparencyLog === "required" ? 1 : 0,
  };
  const material = bundle.verificationMaterial.content;
  const missing = missingEvidence(bundle, policy);
  if (missing !== undefined) return { ok: false, kind: "unmet", reason: missing };
  let signer: string;
  try {
    const entity = toSignedEntity(bundle);
    if (material.$case === "publicKey") {
      const hint = material.publicKey.hint;
      const named = policy.keys.find((k) => k.hint === hint);
      if (hint && named === undefined) {
        return {
          ok: false,
          kind: "untrusted",
          reason: `it is signed by a key the policy does not trust (hint ${hint})`,
        };
      }
      // No hint: try each trusted key.
      const candidates = named ? [named] : policy.keys;
      let last: unknown;
      let found: string | undefined;
      for (const candidate of candidates) {
        try {
          new Verifier(trustMaterialFor(policy, candidate.key), options).verify(entity);
          found = candidate.name;
          break;
        } catch (error) {
          last = error;
        }
      }
      if (found === undefined) {
        if (candidates.length === 0)
          return { ok: false, kind: "untrusted", reason: "it is signed with a key and the policy trusts none" };
        throw last;
      }
      signer = `key ${found}`;
    } else {
      if (policy.identities.length === 0) {
        return {
          ok: false,
          kind: "untrusted",
          reason: "it is signed with a certificate and the policy trusts no certificate identity",
        };
      }
      // The chain (to a CA in the trusted root, at the verified time), the timestamps and the
      // signature, once; then the certificate's identity against each the policy trusts.
      const result = new Verifier(trustMaterialFor(policy), options).verify(entity);
      const subject = result.identity?.subjectAlternativeName;
      const issuer = result.identity?.extensions?.issuer;
      const identity = policy.identities.find(
        (id) => matches(id.subject, id.subjectRegExp, subject) && matches(id.issuer, id.issuerRegExp, issuer),
      );
      if (identity === undefined) {
        return {
          ok: false,
          kind: "untrusted",
          reason: `its certificate names ${subject ?? "no subject"} (issuer ${issuer ?? "none"}), and the policy trusts only ${policy.identities.map(describeIdentity).join(", ")}`,
        };
      }
      signer = `${subject} (issuer ${issuer})`;
    }
  } catch (error) {
    if (error instanceof PolicyError) {
      return {
        ok: false,
        kind: "untrusted",
        reason: `its certificate identity is not one the policy trusts (${error.message})`,
      };
    }
    if (error instanceof VerificationError) {
      // With the log required, a certificate must carry a CT log's SCT too (as cosign requires
      // of a Fulcio certificate); @sigstore/verify tells that shortfall only by its message.
      if (
        error.code === "CERTIFICATE_ERROR" &&
        /\bSCTs?\b/.test(error.message) &&
        policy.transparencyLog === "required"
      ) {
        return {
          ok: false,
          kind: "unmet",
          reason: `its certificate carries no signed certificate timestamp that verifies against the CT logs in the policy's trusted root, and the policy requires the transparency log (transparencyLog: required; ${error.message})`,
        };
      }
      if (error.code === "CERTIFICATE_ERROR") {
        return {
          ok: false,
          kind: "untrusted",
          reason: `its certificate does not chain to a certificate authority in the policy's trusted root at the time it signed (${error.message})`,
        };
      }
      if (error.code === "TIMESTAMP_ERROR" && policy.timestamps === "required") {
        return {
          ok: false,
          kind: "unmet",
          reason: `its timestamp does not verify against the timestamp authorities in the policy's trusted root, and the policy requires one (timestamps: required; ${error.message})`,
        };
      }
      // @sigstore/verify names each way an entry fails (TLOG_BODY_ERROR, TLOG_INCLUSION_PROOF_ERROR,
      // TLOG_INCLUSION_PROMISE_ERROR, …): any of them leaves the policy's requirement unmet.
      if (error.code.startsWith("TLOG_") && policy.transparencyLog === "required") {
        const what =
          error.code === "TLOG_BODY_ERROR"
            ? "records another signature than the bundle's"
            : "does not verify against the logs in the policy's trusted root";
        return {
          ok: false,
          kind: "unmet",
          reason: `its transparency-log entry ${what}, and the policy requires one (transparencyLog: required; ${error.code}: ${error.message})`,
        };
      }
      const kind = error.code === "PUBLIC_KEY_ERROR" ? "untrusted" : "invalid";
      return { ok: false, kind, reason: `${error.code}: ${error.message}` };
    }
    return { ok: false, kind: "invalid", reason: (error as Error).message };
  }
  // The signature is good; it must be over this manifest.
  if (bundle.content.$case === "dsseEnvelope") {
    const envelope = bundle.content.dsseEnvelope;
    if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
      return {
        ok: false,
        kind: "invalid",
        reason: `its DSSE payload is ${envelope.payloadType}, not an in-toto statement`,
      };
    }
    let statement: { subject?: Array<{ digest?: Record<string, string> }> };
    try {
      statement = JSON.parse(Buffer.from(envelope.payload).toString("utf8"));
    } catch {
      return { ok: false, kind: "invalid", reason: "its in-toto statement is not JSON" };
    }
    const [algorithm, hex] = digest.split(":") as [string, string];
    if (!statement.subject?.some((s) => s.digest?.[algorithm] === hex)) {
      return { ok: false, kind: "invalid", reason: `it signs another artifact, not ${digest}` };
    }
  } else {
    const signed = bundle.content.messageSignature.messageDigest;
    const [, hex] = digest.split(":") as [string, string];
    if (signed === undefined || Buffer.from(signed.digest).toString("hex") !== hex) {
      return { ok: false, kind: "invalid", reason: `its message signature is not over ${digest}` };
    }
  }
  return { ok: true, signer };
}
