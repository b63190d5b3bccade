import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { OciClient } from "@nodekit/oci";
import { type RegistryKind, type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, localKeySigner, verifyRelease } from "@nodekit/release";
import { tempDir } from "@nodekit/test-utils";
import { binaries } from "@nodekit/testenv";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { publishTestRelease } from "./index.ts";
import {
  certificateSigner,
  createCertificateAuthority,
  createTimestampAuthority,
  policyFrom,
  timestampWitness,
  trustedRootFor,
} from "./testing.ts";

// Cross-check with cosign (built from its Go module by `tooling/registry-testbin/ensure.sh
// --with-extras`, optional and cached): `cosign verify --key` accepts the bundles we attach,
// and we accept what `cosign sign --key` attaches. cosign runs with its own HOME, an empty
// trusted root and a signing config without services, so it never looks for Sigstore's
// public instance (and the tests' network namespace has only loopback anyway).

const execFileAsync = promisify(execFile);

/** cosign beside the registries (the test runner's directory), when `ensure.sh --with-extras` built it there. */
async function cosignBinary(): Promise<string | undefined> {
  const bin = join(await binaries("registry"), "cosign");
  try {
    accessSync(bin, constants.X_OK);
    return bin;
  } catch {
    return undefined;
  }
}

const cosign = await cosignBinary();
const EMPTY_ROOT = JSON.stringify({
  mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
  tlogs: [],
  certificateAuthorities: [],
  ctlogs: [],
  timestampAuthorities: [],
});
const NO_SERVICES = JSON.stringify({
  mediaType: "application/vnd.dev.sigstore.signingconfig.v0.2+json",
  rekorTlogConfig: {},
  tsaConfig: {},
});

describe.skipIf(cosign === undefined).each<RegistryKind>(["ggcr", "distribution"])(
  "cosign against the %s registry (skipped when the cached cosign build is absent: tooling/registry-testbin/ensure.sh --with-extras builds it)",
  (kind) => {
    let registry: RunningRegistry;
    let dir: Awaited<ReturnType<typeof tempDir>>;
    const client = new OciClient({ plainHttp: true });
    const key = generateSigningKeyPair();
    const run = (args: string[]) =>
      execFileAsync(cosign ?? "cosign", args, {
        cwd: dir.path,
        env: { PATH: process.env.PATH ?? "", HOME: dir.path, TUF_ROOT: join(dir.path, "tuf"), COSIGN_PASSWORD: "" },
        timeout: 60_000,
      });
    const registryFlags = ["--allow-http-registry", "--allow-insecure-registry"];
    /** cosign verify --key with the test key's public half (no transparency log). */
    const verifyWithKey = (reference: string) =>
      run([
        "verify",
        "--key",
        "pub.pem",
        "--insecure-ignore-tlog",
        "--trusted-root",
        "trusted-root.json",
        ...registryFlags,
        reference,
      ]);
    const policy = () => policyFrom({ keys: [{ name: "cosign-key", publicKeyPem: key.publicKeyPem }] });

    beforeAll(async () => {
      dir = await tempDir("nodekit-cosign-");
      await mkdir(join(dir.path, "tuf"));
      await writeFile(join(dir.path, "key.pem"), key.privateKeyPem);
      await writeFile(join(dir.path, "pub.pem"), key.publicKeyPem);
      await writeFile(join(dir.path, "trusted-root.json"), EMPTY_ROOT);
      await writeFile(join(dir.path, "signing-config.json"), NO_SERVICES);
      await run(["import-key-pair", "--key", "key.pem", "--output-key-prefix", "cosign", "-y"]);
      registry = await startRegistry({ kind, auth: { type: "none" } });
    }, 60_000);
    afterAll(async () => {
      await registry?.stop();
      await dir?.cleanup();
    });

    test("cosign verify --key accepts the release we sign", async () => {
      const published = await publishTestRelease({
        client,
        registry: registry.host,
        signer: localKeySigner(key.privateKeyPem),
      });
      const { stdout, stderr } = await verifyWithKey(published.reference);
      expect(stderr).toContain("The signatures were verified against the specified public key");
      expect(JSON.parse(stdout)[0].critical.image["docker-manifest-digest"]).toBe(published.digest);
    });

    test("we accept what cosign sign --key attaches", async () => {
      const unsigned = await publishTestRelease({
        client,
        registry: registry.host,
        prefix: "by-cosign",
        signer: localKeySigner(key.privateKeyPem),
        sign: false,
      });
      await run([
        "sign",
        "--key",
        "cosign.key",
        "--signing-config",
        "signing-config.json",
        "--trusted-root",
        "trusted-root.json",
        ...registryFlags,
        "-y",
        unsigned.reference,
      ]);
      const verified = await verifyRelease({ client, reference: unsigned.tagReference, policy: policy() });
      expect(verified.digest).toBe(unsigned.digest);
      expect(verified.signer).toBe("key cosign-key");
    });

    test("cosign verify accepts a keyless release we sign (certificate identity, RFC 3161 timestamp, our trusted root), and only for that identity", async () => {
      const [ca, tsa] = await Promise.all([createCertificateAuthority(), createTimestampAuthority()]);
      await writeFile(
        join(dir.path, "keyless-root.json"),
        JSON.stringify(trustedRootFor({ certificateAuthorities: [ca], timestampAuthorities: [tsa] })),
      );
      const subject = "release-manager@nvkr.example.com";
      const issuer = "https://oidc.nvkr.example.com";
      const published = await publishTestRelease({
        client,
        registry: registry.host,
        prefix: "keyless",
        signer: certificateSigner({ ca, subject, issuer }),
        witnesses: [timestampWitness(tsa)],
      });
      const verifyAs = (identity: string) =>
        run([
          "verify",
          "--certificate-identity",
          identity,
          "--certificate-oidc-issuer",
          issuer,
          "--trusted-root",
          "keyless-root.json",
          "--use-signed-timestamps",
          "--insecure-ignore-tlog",
          "--insecure-ignore-sct",
          ...registryFlags,
          published.reference,
        ]);
      const { stdout } = await verifyAs(subject);
      expect(JSON.parse(stdout)[0].critical.image["docker-manifest-digest"]).toBe(published.digest);
      await expect(verifyAs("someone-else@nvkr.example.com")).rejects.toThrow();
    });

    test("cosign rejects a release signed by another key", async () => {
      const other = generateSigningKeyPair();
      const published = await publishTestRelease({
        client,
        registry: registry.host,
        prefix: "other-key",
        signer: localKeySigner(other.privateKeyPem),
      });
      await expect(verifyWithKey(published.reference)).rejects.toThrow();
    });
  },
);
