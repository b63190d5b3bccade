import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { OciClient } from "@nodekit/oci";
import { loopbackServers } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { checkArtifactContent } from "./content.ts";

// The order of the content check's reads, on a registry on loopback that records them.

const { listen } = loopbackServers();
const sha256 = (bytes: string | Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

test("a blob is read as soon as its manifest names it, ahead of the manifests still waiting (bytes flow from the start)", async () => {
  // Given three artifacts of one layer each, in a registry that logs every GET
  const content = new Map<string, { type: string; body: Buffer }>();
  const artifacts = ["a", "b", "c"].map((name) => {
    const layer = Buffer.from(`layer of ${name}\n`);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256("{}"), size: 2 },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256(layer), size: layer.length }],
      }),
    );
    content.set(`/v2/r/${name}/manifests/${sha256(manifest)}`, {
      type: "application/vnd.oci.image.manifest.v1+json",
      body: manifest,
    });
    content.set(`/v2/r/${name}/blobs/${sha256(layer)}`, { type: "application/octet-stream", body: layer });
    content.set(`/v2/r/${name}/blobs/${sha256("{}")}`, { type: "application/octet-stream", body: Buffer.from("{}") });
    return { name, manifest: sha256(manifest) };
  });
  const reads: string[] = [];
  const host = new URL(
    await listen(
      createServer((req, res) => {
        const path = req.url ?? "";
        const found = content.get(path);
        if (found === undefined) {
          res.writeHead(404).end();
          return;
        }
        reads.push(`${path.split("/")[3]} ${path.split("/")[4] === "manifests" ? "manifest" : "blob"}`);
        res.writeHead(200, { "content-type": found.type, "content-length": found.body.length }).end(found.body);
      }),
    ),
  ).host;
  const client = new OciClient({ plainHttp: true });

  // When the content is checked one read at a time
  const report = await checkArtifactContent(
    client,
    artifacts.map((a, i) => ({ field: `images[${i}]`, repository: `${host}/r/${a.name}`, digest: a.manifest })),
    { concurrency: 1 },
  );

  // Then every byte was hashed, and each manifest's blobs were read before the next manifest
  expect(report).toMatchObject({ missing: [], corrupt: [], blobs: 6 });
  expect(reads).toEqual([
    "a manifest",
    "a blob",
    "a blob",
    "b manifest",
    "b blob",
    "b blob",
    "c manifest",
    "c blob",
    "c blob",
  ]);
});
