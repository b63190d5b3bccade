import { createHash, generateKeyPairSync, verify } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  COSIGN_SIGNATURE_ANNOTATION,
  COSIGN_SIMPLE_SIGNING_MEDIA_TYPE,
  cosignSignature,
  publicKeyOf,
  pushFluxArtifacts,
} from "./flux-push.ts";
import { packedManifests } from "./test-support.ts";

const key = () =>
  generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const DIGEST = `sha256:${"ab".repeat(32)}`;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("cosignSignature", () => {
  test("a simple-signing payload naming the repository and digest, signed with the key, under cosign's tag", () => {
    const privateKey = key();
    const signature = cosignSignature("127.0.0.1:5000/nvke/site/widgets", DIGEST, privateKey);
    expect(signature.tag).toBe(`sha256-${"ab".repeat(32)}.sig`);
    const manifest = JSON.parse(text(signature.manifest.bytes));
    const [layer] = manifest.layers;
    expect(layer.mediaType).toBe(COSIGN_SIMPLE_SIGNING_MEDIA_TYPE);
    const payload = signature.blobs.find((b) => b.digest === layer.digest);
    expect(JSON.parse(text(payload?.bytes ?? new Uint8Array()))).toEqual({
      critical: {
        identity: { "docker-reference": "127.0.0.1:5000/nvke/site/widgets" },
        image: { "docker-manifest-digest": DIGEST },
        type: "cosign container image signature",
      },
      optional: null,
    });
    const sig = Buffer.from(layer.annotations[COSIGN_SIGNATURE_ANNOTATION], "base64");
    expect(verify("sha256", payload?.bytes ?? new Uint8Array(), publicKeyOf(privateKey), sig)).toBe(true);
    // Another key's public key does not verify it.
    expect(verify("sha256", payload?.bytes ?? new Uint8Array(), publicKeyOf(key()), sig)).toBe(false);
    // Every blob is named by its own digest; the config lists the payload as its one layer.
    for (const b of [signature.manifest, ...signature.blobs]) {
      expect(b.digest).toBe(`sha256:${createHash("sha256").update(b.bytes).digest("hex")}`);
    }
    const config = signature.blobs.find((b) => b.digest === manifest.config.digest);
    expect(JSON.parse(text(config?.bytes ?? new Uint8Array())).rootfs.diff_ids).toEqual([layer.digest]);
  });
});

describe("pushFluxArtifacts", () => {
  test("blobs before manifests, each artifact by digest at <repository>/<item>, its signature under cosign's tag", async () => {
    const artifact = await packedManifests("widgets", "kind: ConfigMap\n");
    const calls: string[] = [];
    const pusher = {
      pushBlob: async (repository: string, bytes: Uint8Array) => {
        calls.push(`blob ${repository} ${createHash("sha256").update(bytes).digest("hex").slice(0, 8)}`);
      },
      putManifest: async (repository: string, _bytes: Uint8Array, options?: { tag?: string }) => {
        calls.push(`manifest ${repository} ${options?.tag ?? "by digest"}`);
      },
    };
    const unsigned = await pushFluxArtifacts(pusher, { repository: "oci://r.test/nvke/", artifacts: [artifact] });
    expect(unsigned).toEqual([{ item: "widgets", reference: `r.test/nvke/widgets@${artifact.digest}` }]);
    expect(calls.map((c) => c.split(" ").slice(0, 2).join(" ")).at(-1)).toBe("manifest r.test/nvke/widgets");
    expect(calls.at(-1)).toBe("manifest r.test/nvke/widgets by digest");
    calls.length = 0;
    const signed = await pushFluxArtifacts(pusher, {
      repository: "r.test/nvke",
      artifacts: [artifact],
      signingKeyPem: key(),
    });
    const tag = `${artifact.digest.replace(":", "-")}.sig`;
    expect(signed[0]?.signature).toBe(`r.test/nvke/widgets:${tag}`);
    expect(calls.filter((c) => c.startsWith("manifest"))).toEqual([
      "manifest r.test/nvke/widgets by digest",
      `manifest r.test/nvke/widgets ${tag}`,
    ]);
    expect(calls.filter((c) => c.startsWith("blob"))).toHaveLength(4);
  });
});
