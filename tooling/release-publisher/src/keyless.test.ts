import { OciClient } from "@nodekit/oci";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, type ReleasePolicy, verifyRelease } from "@nodekit/release";
import { userErrorOf } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type PublishedTestRelease, publishTestRelease } from "./index.ts";
import {
  type CertificateAuthority,
  certificateSigner,
  createCertificateAuthority,
  createCertificateTransparencyLog,
  createTimestampAuthority,
  createTransparencyLog,
  policyFrom,
  type TimestampAuthority,
  timestampWitness,
  transparencyLogWitness,
  trustedRootFor,
} from "./testing.ts";

// Keyless releases, verified fully offline: a Fulcio-like CA and an RFC 3161 TSA made in the
// test, a trusted root naming them, and releases signed by a CI identity's short-lived
// certificate with a timestamp, published to a real registry on loopback (ggcr: the
// referrers API; the tag fallback is the same code for keys and certificates).

const SUBJECT = "https://ci.nvkr.example.com/nvke/release.yml@refs/tags/v1.4.0";
const ISSUER = "https://oidc.nvkr.example.com";

let registry: RunningRegistry;
let client: OciClient;
let ca: CertificateAuthority;
let tsa: TimestampAuthority;
let trustedRootJson: Record<string, unknown>;
let signed: PublishedTestRelease;

const trusting = (identity: ReleasePolicy["identities"][number], root = trustedRootJson) =>
  policyFrom({ identities: [identity], trustedRootJson: root });

/** verifyRelease of `release` (by its tag) under `policy`. */
const verifiedUnder = (release: PublishedTestRelease, policy: ReleasePolicy) =>
  verifyRelease({ client, reference: release.tagReference, policy });

/** The user error verifying `release` fails with, under a policy trusting the test identity (and `root`). */
const refusal = (release: PublishedTestRelease, root = trustedRootJson) =>
  userErrorOf(verifiedUnder(release, trusting({ subject: SUBJECT, issuer: ISSUER }, root)));

async function publish(prefix: string, options: Partial<Parameters<typeof publishTestRelease>[0]> = {}) {
  return publishTestRelease({
    client,
    registry: registry.host,
    prefix,
    signer: certificateSigner({ ca, subject: SUBJECT, issuer: ISSUER }),
    witnesses: [timestampWitness(tsa)],
    ...options,
  });
}

beforeAll(async () => {
  [ca, tsa] = await Promise.all([createCertificateAuthority(), createTimestampAuthority()]);
  trustedRootJson = trustedRootFor({ certificateAuthorities: [ca], timestampAuthorities: [tsa] });
  registry = await startRegistry({ kind: "ggcr", auth: { type: "none" } });
  client = new OciClient({ plainHttp: true });
  signed = await publish("nvke");
}, 60_000);
afterAll(async () => {
  await registry?.stop();
});

describe("a release signed by a certificate identity, with a timestamp", () => {
  test("verifies under a policy naming that identity exactly, and says who signed", async () => {
    const verified = await verifyRelease({
      client,
      reference: signed.tagReference,
      policy: trusting({ subject: SUBJECT, issuer: ISSUER }),
    });
    expect(verified.digest).toBe(signed.digest);
    expect(verified.signer).toBe(`${SUBJECT} (issuer ${ISSUER})`);
    expect(verified.artifactsChecked).toBe(5);
  });

  test("verifies under regular expressions that match the whole subject and issuer", async () => {
    const policy = trusting({
      subjectRegExp: "https://ci\\.nvkr\\.example\\.com/nvke/release\\.yml@refs/tags/v.*",
      issuerRegExp: "https://oidc\\.nvkr\\.example\\.(com|org)",
    });
    expect((await verifyRelease({ client, reference: signed.tagReference, policy })).digest).toBe(signed.digest);
  });

  test("a policy naming another identity: RELEASE_UNTRUSTED_SIGNER, naming the certificate's identity", async () => {
    const error = await userErrorOf(
      verifyRelease({
        client,
        reference: signed.tagReference,
        policy: trusting({ subject: "https://ci.nvkr.example.com/other/repo.yml@refs/heads/main", issuer: ISSUER }),
      }),
    );
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.exitCode).toBe(1);
    expect(error.why).toContain(`its certificate names ${SUBJECT} (issuer ${ISSUER})`);
  });

  test("the right subject from another issuer, or a pattern matching only part of it: RELEASE_UNTRUSTED_SIGNER", async () => {
    for (const identity of [
      { subject: SUBJECT, issuer: "https://oidc.someone-else.example.com" },
      { subjectRegExp: "https://ci\\.nvkr\\.example\\.com/nvke", issuer: ISSUER },
    ]) {
      const error = await userErrorOf(
        verifyRelease({ client, reference: signed.tagReference, policy: trusting(identity) }),
      );
      expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    }
  });

  test("a policy that trusts keys only: RELEASE_UNTRUSTED_SIGNER", async () => {
    const policy = policyFrom({ keys: [{ name: "k", publicKeyPem: generateSigningKeyPair().publicKeyPem }] });
    const error = await userErrorOf(verifyRelease({ client, reference: signed.tagReference, policy }));
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.why).toContain("trusts no certificate identity");
  });
});

describe("transparencyLog: required", () => {
  test("a certificate carrying a CT log's SCT, its signature in the transparency log: verifies; either log missing from the root: RELEASE_POLICY_UNMET", async () => {
    // Given a Fulcio-like CA that embeds a CT log's SCT in each leaf, and a transparency log
    const ctLog = createCertificateTransparencyLog();
    const fulcio = await createCertificateAuthority({ commonName: "offline CA with CT", ctLog });
    const log = createTransparencyLog();
    const release = await publish("logged-sct", {
      signer: certificateSigner({ ca: fulcio, subject: SUBJECT, issuer: ISSUER }),
      witnesses: [timestampWitness(tsa), transparencyLogWitness(log)],
    });
    const requiring = (root: Record<string, unknown>) =>
      policyFrom({
        identities: [{ subject: SUBJECT, issuer: ISSUER }],
        trustedRootJson: root,
        transparencyLog: "required",
      });
    const authorities = { certificateAuthorities: [fulcio], timestampAuthorities: [tsa] };
    // When the trusted root names both logs, Then it verifies
    const verified = await verifiedUnder(
      release,
      requiring(trustedRootFor({ ...authorities, transparencyLogs: [log], ctLogs: [ctLog] })),
    );
    expect(verified.signer).toBe(`${SUBJECT} (issuer ${ISSUER})`);
    // And without the CT log, or without the transparency log, the requirement is unmet
    for (const [root, why] of [
      [
        trustedRootFor({ ...authorities, transparencyLogs: [log] }),
        "its certificate carries no signed certificate timestamp that verifies",
      ],
      [
        trustedRootFor({ ...authorities, ctLogs: [ctLog] }),
        "its transparency-log entry does not verify against the logs",
      ],
    ] as const) {
      const error = await userErrorOf(verifiedUnder(release, requiring(root)));
      expect(error.code).toBe("RELEASE_POLICY_UNMET");
      expect(error.why).toContain(why);
      expect(error.why).toContain("(transparencyLog: required;");
    }
  });
});

describe("rejected", () => {
  test("a certificate from a CA that is not in the trusted root: RELEASE_UNTRUSTED_SIGNER", async () => {
    const rogue = await createCertificateAuthority({ commonName: "rogue CA" });
    const release = await publish("rogue", {
      signer: certificateSigner({ ca: rogue, subject: SUBJECT, issuer: ISSUER }),
    });
    const error = await refusal(release);
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.why).toContain("does not chain to a certificate authority in the policy's trusted root");
    // The same release verifies once the policy's root names that CA: the chain was the only fault.
    const widened = trustedRootFor({ certificateAuthorities: [ca, rogue], timestampAuthorities: [tsa] });
    const verified = await verifiedUnder(release, trusting({ subject: SUBJECT, issuer: ISSUER }, widened));
    expect(verified.digest).toBe(release.digest);
  });

  test("a bundle without the timestamp the policy requires: RELEASE_POLICY_UNMET, naming the setting", async () => {
    const release = await publish("untimed", { witnesses: [] });
    const error = await refusal(release);
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.exitCode).toBe(1);
    expect(error.why).toContain("it carries no timestamp, and policy.yaml requires one (timestamps: required)");
  });

  test("a timestamp from an authority that is not in the trusted root: RELEASE_POLICY_UNMET", async () => {
    const rogue = await createTimestampAuthority({ commonName: "rogue TSA" });
    const release = await publish("rogue-tsa", { witnesses: [timestampWitness(rogue)] });
    const error = await refusal(release);
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.why).toContain("does not verify against the timestamp authorities in the policy's trusted root");
  });

  test("transparencyLog: required, and a certificate without a CT log's SCT: RELEASE_POLICY_UNMET, naming the setting", async () => {
    // Given a release logged in a transparency log the trusted root names, its certificate from
    // a CA that (unlike Fulcio) writes no signed certificate timestamp
    const log = createTransparencyLog();
    const release = await publish("logged-no-sct", { witnesses: [timestampWitness(tsa), transparencyLogWitness(log)] });
    const root = trustedRootFor({ certificateAuthorities: [ca], timestampAuthorities: [tsa], transparencyLogs: [log] });
    // When the policy requires the log
    const error = await userErrorOf(
      verifiedUnder(
        release,
        policyFrom({
          identities: [{ subject: SUBJECT, issuer: ISSUER }],
          trustedRootJson: root,
          transparencyLog: "required",
        }),
      ),
    );
    // Then the missing SCT is named as the unmet requirement, not as an untrusted CA
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.why).toContain("its certificate carries no signed certificate timestamp");
    expect(error.why).toContain("(transparencyLog: required; expected 1 SCTs, got 0)");
    // And without the log requirement the same release verifies (its entry is checked all the same)
    const verified = await verifiedUnder(release, trusting({ subject: SUBJECT, issuer: ISSUER }, root));
    expect(verified.digest).toBe(release.digest);
  });

  test("a timestamp from after the certificate expired (its ten minutes): RELEASE_UNTRUSTED_SIGNER", async () => {
    const later = await createTimestampAuthority({
      commonName: "late TSA",
      clock: () => new Date(Date.now() + 11 * 60_000),
    });
    const release = await publish("late", { witnesses: [timestampWitness(later)] });
    const root = trustedRootFor({ certificateAuthorities: [ca], timestampAuthorities: [tsa, later] });
    const error = await refusal(release, root);
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.why).toContain("at the time it signed");
  });
});

describe("transparencyLog: none", () => {
  test("a bundle that carries a log entry anyway (its log not in the root) verifies: the entry is ignored", async () => {
    const release = await publish("keyless-logged", {
      witnesses: [timestampWitness(tsa), transparencyLogWitness(createTransparencyLog())],
    });
    const verified = await verifiedUnder(release, trusting({ subject: SUBJECT, issuer: ISSUER }));
    expect(verified.signer).toBe(`${SUBJECT} (issuer ${ISSUER})`);
  });
});
