import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot, tempDir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { listedArtifacts, parseReleaseDescription } from "./description.ts";
import { generateSigningKeyPair, keyHint, localKeySigner } from "./keys.ts";
import { loadReleasePolicy, parseReleasePolicy } from "./policy.ts";

const sha = (c: string) => `sha256:${c.repeat(64)}`;

/** The policy in the YAML block `example` captures from `file`; a public key in it (illustrative) is replaced by a real one. */
async function documentedPolicy(file: string, example: RegExp) {
  const yaml = example.exec(await readFile(join(repoRoot, file), "utf8"))?.[1] ?? "";
  const text = yaml.replace(
    /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/,
    generateSigningKeyPair().publicKeyPem.trim().split("\n").join("\n      "),
  );
  return parseReleasePolicy(text, { source: file });
}

describe("the policy file", () => {
  test("the README's example is a valid policy", async () => {
    const parsed = await documentedPolicy("packages/release/README.md", /## The policy file\n\n```yaml\n([\s\S]*?)```/);
    expect(parsed.problems).toEqual([]);
    expect(parsed.value).toMatchObject({
      transparencyLog: "none",
      timestamps: "none",
      trustedKeys: [{ name: "nvkr-release-2026" }],
    });
  });

  test("docs/release-policy.md's complete example with keys is a valid policy", async () => {
    const parsed = await documentedPolicy(
      "docs/release-policy.md",
      /## A complete example: keys\n\n```yaml\n([\s\S]*?)```/,
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.value).toMatchObject({
      transparencyLog: "none",
      timestamps: "none",
      trustedKeys: [{ name: "nvkr-release-2026" }],
      trustedIdentities: [],
    });
  });

  test("docs/release-policy.md's complete example with certificate identities is a valid policy", async () => {
    const parsed = await documentedPolicy(
      "docs/release-policy.md",
      /## A complete example: certificate identities\n[\s\S]*?```yaml\n([\s\S]*?)```/,
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.value).toMatchObject({
      trustedKeys: [],
      trustedRoot: "trusted_root.json",
      timestamps: "required",
      transparencyLog: "none",
    });
    const [workflow, person] = parsed.value?.trustedIdentities ?? [];
    expect(person).toEqual({ issuer: "https://oidc.nvkr.example.com", subject: "release-manager@nvkr.example.com" });
    // The pattern is read as written (no YAML escapes), and matches a tag's workflow identity.
    expect(
      new RegExp(`^(?:${workflow?.subjectRegExp})$`).test(
        "https://ci.nvkr.example.com/nvke/release.yml@refs/tags/v1.4.0",
      ),
    ).toBe(true);
  });

  test("an identity needs exactly one of each pair, and its patterns must compile", () => {
    const parsed = parseReleasePolicy(
      [
        "apiVersion: release.nvke.nodekit.dev/v1",
        "kind: ReleasePolicy",
        "trustedIdentities:",
        "  - subject: a@example.com",
        "  - issuer: https://i.example.com",
        "    issuerRegExp: https://i\\..*",
        "    subjectRegExp: '(unclosed'",
        "trustedRoot: root.json",
        "transparencyLog: none",
        "timestamps: required",
        "",
      ].join("\n"),
      { source: "p.yaml" },
    );
    expect(parsed.problems.map((p) => `${p.path?.join(".")}: ${p.message}`)).toEqual(
      expect.arrayContaining([
        "trustedIdentities.0: needs exactly one of issuer and issuerRegExp",
        "trustedIdentities.1: needs exactly one of issuer and issuerRegExp",
        "trustedIdentities.1.subjectRegExp: is not a valid regular expression",
      ]),
    );
  });

  test("a required timestamp or log needs a trusted root to check it against", () => {
    const key = generateSigningKeyPair().publicKeyPem.trim().split("\n").join("\n      ");
    const parsed = parseReleasePolicy(
      `apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedKeys:\n  - name: k\n    publicKey: |\n      ${key}\ntransparencyLog: none\ntimestamps: required\n`,
      { source: "p.yaml" },
    );
    expect(parsed.problems).toEqual([
      expect.objectContaining({ path: ["trustedRoot"], message: expect.stringContaining("with timestamps: required") }),
    ]);
  });

  test("transparency-log and timestamp settings must be written down; every problem is located", () => {
    const parsed = parseReleasePolicy(
      "apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedKeys:\n  - name: k\n    publicKey: not a key\ntoken: s3cr3t\n",
      { source: "policy.yaml" },
    );
    const byPath = Object.fromEntries(parsed.problems.map((p) => [p.path?.join("."), p]));
    expect(byPath["trustedKeys.0.publicKey"]).toMatchObject({
      line: 5,
      message: expect.stringContaining("PEM public key"),
    });
    expect(byPath.transparencyLog).toBeDefined();
    expect(byPath.timestamps).toBeDefined();
    expect(byPath.token).toMatchObject({ line: 6 });
    expect(byPath.token?.value).toBeUndefined(); // an unknown field's value is never quoted back
  });

  test("identities need a trusted root and a timestamp or log requirement", () => {
    const parsed = parseReleasePolicy(
      `apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedIdentities:\n  - issuer: https://issuer.example.com\n    subject: release@example.com\ntransparencyLog: none\ntimestamps: none\n`,
      { source: "p.yaml" },
    );
    expect(parsed.problems.map((p) => p.path?.join("."))).toEqual(
      expect.arrayContaining(["trustedRoot", "timestamps"]),
    );
  });

  test("loadReleasePolicy: a malformed file is RELEASE_POLICY_INVALID (exit 3), nothing verified", async () => {
    const dir = await tempDir();
    try {
      await writeFile(join(dir.path, "p.yaml"), "kind: ReleasePolicy\n");
      const error = await userErrorOf(loadReleasePolicy(join(dir.path, "p.yaml"), { source: "p.yaml" }));
      expect(error.code).toBe("RELEASE_POLICY_INVALID");
      expect(error.exitCode).toBe(3);
      expect(error.message).toContain("nothing was verified");
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the release description", () => {
  const valid = {
    apiVersion: "release.nvke.nodekit.dev/v1",
    kind: "ReleaseDescription",
    metadata: { name: "nvke", version: "1.4.0" },
    charts: [
      {
        name: "nvke-controller",
        version: "0.3.1",
        reference: "oci://r.example.com/nvke/charts/nvke-controller",
        digest: sha("a"),
      },
    ],
    images: [{ reference: "r.example.com/nvke/controller:1.4.0", digest: sha("b") }],
    providers: [
      {
        name: "cluster-api",
        type: "CoreProvider",
        version: "v1.11.7",
        components: { reference: "r.example.com/nvke/providers/cluster-api", digest: sha("c") },
      },
    ],
    profiles: { reference: "r.example.com/nvke/profiles", digest: sha("d") },
    nvkectl: [{ platform: "linux/amd64", reference: "r.example.com/nvke/nvkectl", digest: sha("e") }],
  };

  test("lists every pinned artifact with its field", () => {
    const parsed = parseReleaseDescription(JSON.stringify(valid), { source: "release.json" });
    expect(parsed.problems).toEqual([]);
    expect(
      listedArtifacts(parsed.value ?? (undefined as never)).map(
        (a) => `${a.field} ${a.repository}@${a.digest.slice(7, 8)}`,
      ),
    ).toEqual([
      "charts[0] r.example.com/nvke/charts/nvke-controller@a",
      "images[0] r.example.com/nvke/controller@b",
      "providers[0].components r.example.com/nvke/providers/cluster-api@c",
      "profiles r.example.com/nvke/profiles@d",
      "nvkectl[0] r.example.com/nvke/nvkectl@e",
    ]);
  });

  test("a digest that is not one, a tag in a chart reference, and no nvkectl: each located", () => {
    const broken = structuredClone(valid) as Record<string, unknown> & typeof valid;
    broken.images[0] = { reference: "r.example.com/x:1", digest: "sha256:short" };
    broken.charts[0] = { ...valid.charts[0], reference: "oci://r.example.com/c:0.3.1" } as (typeof valid.charts)[0];
    broken.nvkectl = [];
    const text = JSON.stringify(broken, null, 2);
    const paths = parseReleaseDescription(text, { source: "release.json" }).problems.map(
      (p) => `${p.path?.join(".")}@${p.line}`,
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^images\.0\.digest@\d+$/),
        expect.stringMatching(/^charts\.0\.reference@\d+$/),
        expect.stringMatching(/^nvkectl@\d+$/),
      ]),
    );
  });
});

test("the signer names its key with cosign's hint (base64 SHA-256 of the SPKI DER)", async () => {
  const key = generateSigningKeyPair();
  const signer = localKeySigner(key.privateKeyPem);
  expect(signer.hint).toBe(keyHint(key.publicKeyPem));
  expect(Buffer.from(signer.hint, "base64")).toHaveLength(32);
  const signature = await signer.sign(Buffer.from("payload"));
  expect(signature.key).toMatchObject({ $case: "publicKey", hint: signer.hint });
});
