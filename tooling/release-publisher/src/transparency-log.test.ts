import { OciClient } from "@nodekit/oci";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, localKeySigner, type ReleasePolicy, verifyRelease } from "@nodekit/release";
import { userErrorOf } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { publishTestRelease } from "./index.ts";
import {
  createTimestampAuthority,
  createTransparencyLog,
  policyFrom,
  type TransparencyLog,
  type TransparencyLogEntry,
  timestampWitness,
  transparencyLogWitness,
  trustedRootFor,
} from "./testing.ts";

// `transparencyLog: required`, with the entry present: releases signed with a key and logged
// in a Rekor-like log made in the test (./keyless.ts: a Merkle tree, its key, a signed entry
// timestamp and an inclusion proof against a signed checkpoint), verified offline against a
// trusted root naming that log. A registry on loopback (ggcr) holds them.

const publisher = generateSigningKeyPair();
const signer = localKeySigner(publisher.privateKeyPem);

let registry: RunningRegistry;
let client: OciClient;
let log: TransparencyLog;

const requiring = (
  logs: readonly TransparencyLog[],
  options: { timestamps?: "required" | "none" } = {},
): ReleasePolicy =>
  policyFrom({
    keys: [{ name: "nvkr-release", publicKeyPem: publisher.publicKeyPem }],
    trustedRootJson: trustedRootFor({ transparencyLogs: logs }),
    transparencyLog: "required",
    ...options,
  });

const publish = (prefix: string, witnesses = [transparencyLogWitness(log)], by = signer) =>
  publishTestRelease({ client, registry: registry.host, prefix, signer: by, witnesses });

/** The release's one bundle's log entries, as published. */
const entriesOf = (release: Awaited<ReturnType<typeof publish>>) =>
  (release.signature?.bundle as { verificationMaterial?: { tlogEntries?: unknown[] } } | undefined)
    ?.verificationMaterial?.tlogEntries ?? [];

beforeAll(async () => {
  log = createTransparencyLog();
  registry = await startRegistry({ kind: "ggcr", auth: { type: "none" } });
  client = new OciClient({ plainHttp: true });
}, 60_000);
afterAll(async () => {
  await registry?.stop();
});

describe("a key-signed release whose bundle carries the log's entry", () => {
  test("verifies under a policy that requires the log, its entry checked by promise and by proof", async () => {
    // Given releases logged one after another (so the later entries' proofs climb a real tree)
    const first = await publish("logged-1");
    const second = await publish("logged-2");
    const third = await publish("logged-3");
    const fourth = await publish("logged-4");
    expect(log.entries.map((e) => [e.logIndex, e.inclusionProof?.treeSize, e.inclusionProof?.hashes.length])).toEqual([
      ["0", "1", 0],
      ["1", "2", 1],
      ["2", "3", 1],
      ["3", "4", 2],
    ]);
    // When each is verified under a policy whose trusted root names the log, Then each is accepted
    for (const release of [first, second, third, fourth]) {
      expect(entriesOf(release)).toHaveLength(1);
      const verified = await verifyRelease({ client, reference: release.tagReference, policy: requiring([log]) });
      expect(verified.digest).toBe(release.digest);
      expect(verified.signer).toBe("key nvkr-release");
    }
  });

  test("an entry with its inclusion proof alone (no signed entry timestamp) verifies: the proof is checked", async () => {
    const release = await publish("proof-only", [
      transparencyLogWitness(log, { alter: (entry) => ({ ...entry, inclusionPromise: undefined }) }),
    ]);
    const verified = await verifyRelease({ client, reference: release.tagReference, policy: requiring([log]) });
    expect(verified.digest).toBe(release.digest);
  });

  test("the log's signed entry timestamp counts as the timestamp a policy requires", async () => {
    const release = await publish("logged-timed");
    const verified = await verifyRelease({
      client,
      reference: release.tagReference,
      policy: requiring([log], { timestamps: "required" }),
    });
    expect(verified.digest).toBe(release.digest);
  });
});

describe("refused: RELEASE_POLICY_UNMET, naming the setting", () => {
  const refusal = async (reference: string, policy = requiring([log])) => {
    const error = await userErrorOf(verifyRelease({ client, reference, policy }));
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.exitCode).toBe(1);
    return error;
  };
  const doesNotVerify =
    "its transparency-log entry does not verify against the logs in the policy's trusted root, and the policy requires one (transparencyLog: required;";

  test("no entry at all", async () => {
    const release = await publish("unlogged", []);
    const error = await refusal(release.tagReference);
    expect(error.why).toContain(
      "it carries no transparency-log entry, and policy.yaml requires one (transparencyLog: required)",
    );
  });

  test("an entry from a log the trusted root does not name; the same release verifies once it does", async () => {
    const rogue = createTransparencyLog({ name: "rogue-tlog.nodekit.invalid" });
    const release = await publish("rogue-log", [transparencyLogWitness(rogue)]);
    const error = await refusal(release.tagReference);
    expect(error.why).toContain(doesNotVerify);
    // The log was the only fault.
    const verified = await verifyRelease({ client, reference: release.tagReference, policy: requiring([log, rogue]) });
    expect(verified.digest).toBe(release.digest);
  });

  test("a genuine entry, but for another release's signature", async () => {
    // Given an entry the log really issued, for the first release signed in this file
    const genuine = log.entries[0];
    if (genuine === undefined) throw new Error("the log has no entry yet");
    // When another release's bundle carries it in place of its own
    const release = await publish("replayed", [transparencyLogWitness(log, { alter: () => genuine })]);
    // Then the entry's body names another signature
    const error = await refusal(release.tagReference);
    expect(error.why).toContain(
      "its transparency-log entry records another signature than the bundle's, and the policy requires one (transparencyLog: required; TLOG_BODY_ERROR",
    );
  });

  const flipped = (data: Uint8Array) => {
    const copy = Buffer.from(data);
    copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0xff;
    return copy;
  };
  const tamperings: Array<[string, (entry: TransparencyLogEntry) => TransparencyLogEntry, string]> = [
    [
      "its signed entry timestamp altered",
      (entry) => ({
        ...entry,
        inclusionPromise: {
          signedEntryTimestamp: flipped(entry.inclusionPromise?.signedEntryTimestamp ?? Buffer.alloc(1)),
        },
      }),
      "TLOG_INCLUSION_PROMISE_ERROR",
    ],
    [
      "its integrated time moved (the signed entry timestamp no longer covers it)",
      (entry) => ({ ...entry, integratedTime: String(Number(entry.integratedTime) - 3600) }),
      "TLOG_INCLUSION_PROMISE_ERROR",
    ],
    [
      "its checkpoint's root hash altered",
      (entry) => {
        const proof = entry.inclusionProof;
        if (proof?.checkpoint === undefined) throw new Error("no checkpoint");
        const [origin, size, root, ...rest] = proof.checkpoint.envelope.split("\n");
        const forged = flipped(Buffer.from(root ?? "", "base64")).toString("base64");
        return {
          ...entry,
          inclusionProof: { ...proof, checkpoint: { envelope: [origin, size, forged, ...rest].join("\n") } },
        };
      },
      "TLOG_INCLUSION_PROOF_ERROR",
    ],
    [
      "its canonicalized body altered (the Merkle proof no longer leads to the signed root)",
      (entry) => {
        const body = JSON.parse(Buffer.from(entry.canonicalizedBody).toString("utf8"));
        body.spec.envelopeHash.value = "0".repeat(64);
        return { ...entry, canonicalizedBody: Buffer.from(JSON.stringify(body)), inclusionPromise: undefined };
      },
      "TLOG_INCLUSION_PROOF_ERROR",
    ],
  ];

  test.each(tamperings)("an entry with %s", async (_name, alter, code) => {
    const release = await publish(`tampered-${tamperings.findIndex((t) => t[1] === alter)}`, [
      transparencyLogWitness(log, { alter }),
    ]);
    const error = await refusal(release.tagReference);
    expect(error.why).toContain(doesNotVerify);
    expect(error.why).toContain(code);
  });
});

// `transparencyLog: none`, and a bundle that carries an entry anyway: `cosign sign --key`
// logs in Rekor by default, so a key-signed release may well carry one. The policy asks for no
// log, so the entry is ignored, as `cosign verify --key … --insecure-ignore-tlog` (and
// sigstore-go without WithTransparencyLog) ignores it: not checked, not counted, and its
// integrated time is no timestamp. The signature is checked as ever.
describe("transparencyLog: none, and a bundle that carries an entry anyway", () => {
  const keyOnly = (options: { trustedRootJson?: Record<string, unknown>; timestamps?: "required" | "none" } = {}) =>
    policyFrom({ keys: [{ name: "nvkr-release", publicKeyPem: publisher.publicKeyPem }], ...options });

  test("verifies under a key-only policy with no trusted root: the entry is not checked against any log", async () => {
    const release = await publish("ignored-no-root");
    expect(entriesOf(release)).toHaveLength(1);
    const verified = await verifyRelease({ client, reference: release.tagReference, policy: keyOnly() });
    expect(verified.digest).toBe(release.digest);
    expect(verified.signer).toBe("key nvkr-release");
  });

  test("an entry from a log the trusted root does not name is ignored too", async () => {
    const rogue = createTransparencyLog({ name: "unlisted-tlog.nodekit.invalid" });
    const release = await publish("ignored-unlisted", [transparencyLogWitness(rogue)]);
    const policy = keyOnly({ trustedRootJson: trustedRootFor({ transparencyLogs: [log] }) });
    expect((await verifyRelease({ client, reference: release.tagReference, policy })).digest).toBe(release.digest);
  });

  test("an entry that would not verify is ignored even when the root names its log; the log required refuses it", async () => {
    // Given a bundle carrying the entry the log issued for another release (its body records another signature)
    await publish("ignored-first");
    const genuine = log.entries.at(-1);
    if (genuine === undefined) throw new Error("the log has no entry");
    const release = await publish("ignored-replayed", [transparencyLogWitness(log, { alter: () => genuine })]);
    // When verified under a key-only policy whose root names the log, Then the entry plays no part
    const root = trustedRootFor({ transparencyLogs: [log] });
    const verified = await verifyRelease({
      client,
      reference: release.tagReference,
      policy: keyOnly({ trustedRootJson: root }),
    });
    expect(verified.digest).toBe(release.digest);
    // And the same bundle under transparencyLog: required is refused, naming the setting
    const error = await userErrorOf(
      verifyRelease({ client, reference: release.tagReference, policy: requiring([log]) }),
    );
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.why).toContain("(transparencyLog: required; TLOG_BODY_ERROR");
  });

  test("under transparencyLog: required every entry is checked: a genuine entry beside one from an unlisted log is refused", async () => {
    const rogue = createTransparencyLog({ name: "second-tlog.nodekit.invalid" });
    const release = await publish("checked-both", [transparencyLogWitness(log), transparencyLogWitness(rogue)]);
    expect(entriesOf(release)).toHaveLength(2);
    const error = await userErrorOf(
      verifyRelease({ client, reference: release.tagReference, policy: requiring([log]) }),
    );
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.why).toContain("(transparencyLog: required;");
    // The same bundle under a key-only policy: both entries ignored
    expect((await verifyRelease({ client, reference: release.tagReference, policy: keyOnly() })).digest).toBe(
      release.digest,
    );
  });

  test("the signature is still checked: another key's bundle with a genuine entry is RELEASE_UNTRUSTED_SIGNER", async () => {
    const stranger = generateSigningKeyPair();
    const release = await publish(
      "ignored-stranger",
      [transparencyLogWitness(log)],
      localKeySigner(stranger.privateKeyPem),
    );
    const error = await userErrorOf(verifyRelease({ client, reference: release.tagReference, policy: keyOnly() }));
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
  });

  test("with timestamps: required, the entry's integrated time is not the timestamp: RELEASE_POLICY_UNMET, naming timestamps", async () => {
    const release = await publish("ignored-not-a-timestamp");
    const policy = keyOnly({ trustedRootJson: trustedRootFor({ transparencyLogs: [log] }), timestamps: "required" });
    const error = await userErrorOf(verifyRelease({ client, reference: release.tagReference, policy }));
    expect(error.code).toBe("RELEASE_POLICY_UNMET");
    expect(error.why).toContain("it carries no timestamp, and policy.yaml requires one (timestamps: required)");
  });

  test("with timestamps: required, an RFC 3161 timestamp beside an entry from an unlisted log verifies", async () => {
    const tsa = await createTimestampAuthority();
    const release = await publish("ignored-timestamped", [timestampWitness(tsa), transparencyLogWitness(log)]);
    const policy = keyOnly({
      trustedRootJson: trustedRootFor({ timestampAuthorities: [tsa] }),
      timestamps: "required",
    });
    expect((await verifyRelease({ client, reference: release.tagReference, policy })).digest).toBe(release.digest);
  });
});
