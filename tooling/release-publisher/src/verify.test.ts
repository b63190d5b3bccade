import { execFile } from "node:child_process";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { envCredentials, OciClient } from "@nodekit/oci";
import { type RegistryKind, type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import {
  fetchRelease,
  generateSigningKeyPair,
  listedArtifacts,
  localKeySigner,
  publishRelease,
  type ReleaseDescription,
  verifyRelease,
} from "@nodekit/release";
import { tempDir, userErrorOf } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { publishTestRelease } from "./index.ts";
import { attachBundleElsewhere, policyFrom, testHelm, writeTestChart } from "./testing.ts";

const execFileAsync = promisify(execFile);
const users = { publisher: "publisher-pw" };
const credentials = envCredentials({
  NODEKIT_REGISTRY_USERNAME: "publisher",
  NODEKIT_REGISTRY_PASSWORD: users.publisher,
});
const publisherKey = generateSigningKeyPair();
const strangerKey = generateSigningKeyPair();

const trustsPublisher = policyFrom({ keys: [{ name: "nvkr-release", publicKeyPem: publisherKey.publicKeyPem }] });

const matrix: Array<{ kind: RegistryKind; auth: "none" | "basic" | "token" }> = [
  { kind: "distribution", auth: "none" },
  { kind: "distribution", auth: "token" },
  { kind: "ggcr", auth: "none" },
  { kind: "ggcr", auth: "basic" },
];

describe.each(matrix)("release on the $kind registry, auth $auth", ({ kind, auth }) => {
  let registry: RunningRegistry;
  let client: OciClient;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let helm: Awaited<ReturnType<typeof testHelm>>;
  let published: Awaited<ReturnType<typeof publishTestRelease>>;

  /** A release of its own under `prefix`, signed with the publisher's key unless `options` say otherwise. */
  const publishUnder = (prefix: string, options: Partial<Parameters<typeof publishTestRelease>[0]> = {}) =>
    publishTestRelease({
      client,
      registry: registry.host,
      prefix,
      signer: localKeySigner(publisherKey.privateKeyPem),
      ...options,
    });

  beforeAll(async () => {
    dir = await tempDir();
    helm = await testHelm(dir.path);
    registry = await startRegistry({ kind, auth: auth === "none" ? { type: "none" } : { type: auth, users } });
    client = new OciClient({ plainHttp: true, credentials });
    published = await publishTestRelease({
      client,
      registry: registry.host,
      charts: [await writeTestChart(dir.path)],
      helm,
      images: ["controller", "agent"],
      signer: localKeySigner(publisherKey.privateKeyPem),
    });
  }, 60_000);
  afterAll(async () => {
    await registry?.stop();
    await dir?.cleanup();
  });

  test("verifies under a policy that trusts the publisher's key, and returns the digest to pin", async () => {
    expect(published.signature?.via).toBe(kind === "ggcr" ? "api" : "tag");
    const verified = await verifyRelease({ client, reference: published.tagReference, policy: trustsPublisher });
    expect(verified.digest).toBe(published.digest);
    expect(verified.reference).toBe(`${registry.host}/nvke/release@${published.digest}`);
    expect(verified.signer).toBe("key nvkr-release");
    // 1 chart, 2 images, 1 provider, profiles, 2 nvkectl platforms.
    expect(verified.artifactsChecked).toBe(7);
    expect(verified.description.charts[0]).toMatchObject({ name: "nvke-controller", version: "0.3.1" });
    // The pinned reference verifies the same.
    expect((await verifyRelease({ client, reference: verified.reference, policy: trustsPublisher })).digest).toBe(
      published.digest,
    );
  });

  test("helm pulls the chart by digest", async () => {
    const chart = published.description.charts[0];
    if (chart === undefined) throw new Error("no chart");
    const loginArgs = auth === "none" ? [] : ["--username", "publisher", "--password-stdin"];
    if (auth !== "none") {
      await new Promise<void>((resolvePromise, reject) => {
        const child = execFile(
          helm.bin,
          ["registry", "login", registry.host, "--insecure", ...loginArgs],
          { env: helm.env },
          (error) => (error ? reject(error) : resolvePromise()),
        );
        child.stdin?.end(users.publisher);
      });
    }
    const out = join(dir.path, `pulled-${kind}-${auth}`);
    await mkdir(out);
    const { stderr } = await execFileAsync(
      helm.bin,
      ["pull", `${chart.reference}@${chart.digest}`, "--plain-http", "--destination", out],
      {
        env: helm.env,
      },
    );
    expect(stderr).not.toMatch(/error/i);
    const pulled = await readdir(out);
    expect(pulled).toHaveLength(1);
    const { stdout } = await execFileAsync(helm.bin, ["show", "chart", join(out, pulled[0] ?? "")], { env: helm.env });
    expect(stdout).toContain("name: nvke-controller");
  });

  test("a policy naming another publisher's key: RELEASE_UNTRUSTED_SIGNER", async () => {
    const other = policyFrom({ keys: [{ name: "someone-else", publicKeyPem: strangerKey.publicKeyPem }] });
    const error = await userErrorOf(verifyRelease({ client, reference: published.tagReference, policy: other }));
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.exitCode).toBe(1);
  });

  test("a digest in the description that the registry lacks: RELEASE_ARTIFACT_MISSING, naming the field", async () => {
    const description = structuredClone(published.description);
    const gone = `sha256:${"0".repeat(64)}`;
    description.images[1] = { reference: description.images[1]?.reference ?? "", digest: gone };
    const republished = await publishTestReleaseDescription(
      client,
      `${registry.host}/nvke/release:missing`,
      description,
    );
    const error = await userErrorOf(verifyRelease({ client, reference: republished, policy: trustsPublisher }));
    expect(error.code).toBe("RELEASE_ARTIFACT_MISSING");
    expect(error.exitCode).toBe(4);
    expect(error.problems).toEqual([
      expect.objectContaining({ path: ["images", 1], message: "is not in the registry" }),
    ]);
  });

  // Issue 26 §1 item 4: every byte hashed, not presence: the same digest and size, other bytes.
  test("a layer changed in the registry's storage: RELEASE_ARTIFACT_CORRUPT, naming the artifact and the layer", async () => {
    const victim = await publishUnder("corrupt", { images: ["controller", "agent"] });
    const image = victim.description.images[1];
    if (image === undefined) throw new Error("no image");
    const repository = image.reference.replace(/:[^/:]+$/, "");
    const manifest = await client.getManifest(`${repository}@${image.digest}`);
    const layer = (manifest.manifest.layers as Array<{ digest: string; size: number }>)[0];
    if (layer === undefined) throw new Error("no layer");
    const changed = Uint8Array.from(await client.getBlob(repository, layer.digest));
    changed[0] = (changed[0] ?? 0) ^ 0xff;
    await registry.tamperBlob(layer.digest, changed);
    // Presence and size alone still pass
    expect(await client.headBlob(repository, layer.digest)).toMatchObject({ size: layer.size });
    const error = await userErrorOf(verifyRelease({ client, reference: victim.tagReference, policy: trustsPublisher }));
    expect(error.code).toBe("RELEASE_ARTIFACT_CORRUPT");
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe(`the content of images[1] ${repository}@${image.digest} does not match its digest`);
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: ["images", 1],
        value: `${repository}@${image.digest}`,
        message: expect.stringContaining(`layer 0 (${layer.digest}) of its manifest does not match its digest`),
      }),
    ]);
  });

  test("every byte is counted: the blobs of every artifact, each once", async () => {
    const verified = await verifyRelease({ client, reference: published.tagReference, policy: trustsPublisher });
    let bytes = 0;
    const seen = new Set<string>();
    for (const artifact of listedArtifacts(published.description)) {
      const { manifest } = await client.getManifest(`${artifact.repository}@${artifact.digest}`);
      for (const d of [manifest.config, ...(manifest.layers as unknown[])] as Array<{ digest: string; size: number }>) {
        const key = `${artifact.repository}@${d.digest}`;
        if (!seen.has(key)) bytes += d.size;
        seen.add(key);
      }
    }
    expect(verified.blobsChecked).toBe(seen.size);
    expect(verified.bytesChecked).toBe(bytes);
  });

  test("a description pushed under the tag without a signature: RELEASE_UNSIGNED", async () => {
    const unsigned = await publishUnder("unsigned", { sign: false });
    const error = await userErrorOf(
      verifyRelease({ client, reference: unsigned.tagReference, policy: trustsPublisher }),
    );
    expect(error.code).toBe("RELEASE_UNSIGNED");
  });

  test("re-signed with an untrusted key (the trusted signature removed): RELEASE_UNTRUSTED_SIGNER", async () => {
    const forged = await publishUnder("forged", { signer: localKeySigner(strangerKey.privateKeyPem) });
    const error = await userErrorOf(verifyRelease({ client, reference: forged.tagReference, policy: trustsPublisher }));
    expect(error.code).toBe("RELEASE_UNTRUSTED_SIGNER");
    expect(error.why).toContain("does not trust");
  });

  test("a trusted key's signature over another artifact, attached to this one: RELEASE_SIGNATURE_INVALID", async () => {
    const victim = await publishUnder("swapped", { sign: false });
    // Copy the real release's bundle onto the unsigned one: a valid signature, for another digest.
    const bundle = published.signature?.bundle;
    const attached = await attachBundleElsewhere(client, `${registry.host}/swapped/release@${victim.digest}`, bundle);
    expect(attached).toBeDefined();
    const error = await userErrorOf(verifyRelease({ client, reference: victim.tagReference, policy: trustsPublisher }));
    expect(error.code).toBe("RELEASE_SIGNATURE_INVALID");
    expect(error.why).toContain("signs another artifact");
  });

  test("a changed description blob under the same tag: RELEASE_DIGEST_MISMATCH, and export (fetch) refuses it too", async () => {
    const victim = await publishUnder("tampered");
    const manifest = await client.getManifest(`${registry.host}/tampered/release@${victim.digest}`);
    const layer = (manifest.manifest.layers as Array<{ digest: string }>)[0];
    if (layer === undefined) throw new Error("no layer");
    const evil = structuredClone(victim.description);
    evil.images[0] = { reference: "evil.example.com/x:1", digest: `sha256:${"e".repeat(64)}` };
    await registry.tamperBlob(layer.digest, new TextEncoder().encode(JSON.stringify(evil)));
    const error = await userErrorOf(verifyRelease({ client, reference: victim.tagReference, policy: trustsPublisher }));
    expect(error.code).toBe("RELEASE_DIGEST_MISMATCH");
    expect((await userErrorOf(fetchRelease({ client, reference: victim.tagReference }))).code).toBe(
      "RELEASE_DIGEST_MISMATCH",
    );
  });

  if (auth === "token") {
    test("the token endpoint answering 401: RELEASE_REGISTRY_AUTH_REFUSED", async () => {
      const fresh = new OciClient({ plainHttp: true, credentials });
      registry.tokenServer?.refuse(true);
      try {
        const error = await userErrorOf(
          verifyRelease({ client: fresh, reference: published.tagReference, policy: trustsPublisher }),
        );
        expect(error.code).toBe("RELEASE_REGISTRY_AUTH_REFUSED");
        expect(error.exitCode).toBe(7);
      } finally {
        registry.tokenServer?.refuse(false);
      }
    });
  }
});

test("a registry that is not there: RELEASE_REGISTRY_UNREACHABLE", async () => {
  const error = await userErrorOf(
    verifyRelease({
      client: new OciClient({ plainHttp: true, timeoutMs: 2000 }),
      reference: "127.0.0.1:9/nvke/release:1",
      policy: trustsPublisher,
    }),
  );
  expect(error.code).toBe("RELEASE_REGISTRY_UNREACHABLE");
  expect(error.exitCode).toBe(6);
});

async function publishTestReleaseDescription(
  client: OciClient,
  reference: string,
  description: ReleaseDescription,
): Promise<string> {
  const published = await publishRelease({
    client,
    reference,
    description,
    signer: localKeySigner(publisherKey.privateKeyPem),
  });
  return published.reference;
}
