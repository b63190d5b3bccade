import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { OciClient } from "@nodekit/oci";
import { loopbackServers } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { fetchProviderFiles } from "./pins.ts";

// A provider's components artifact read from a registry on loopback that records each GET:
// `upgrade plan` wants its metadata.yaml alone, not the components (megabytes for core Cluster API).

const { listen } = loopbackServers();
const sha256 = (bytes: string | Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function providerRegistry() {
  const components = Buffer.from(`# the components\n${"kind: CustomResourceDefinition\n".repeat(1000)}`);
  const metadata = Buffer.from("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries: []\n");
  const layer = (title: string, body: Buffer) => ({
    mediaType: "application/vnd.oci.image.layer.v1.tar",
    digest: sha256(body),
    size: body.length,
    annotations: { "org.opencontainers.image.title": title },
  });
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256("{}"), size: 2 },
      layers: [layer("infrastructure-components.yaml", components), layer("metadata.yaml", metadata)],
    }),
  );
  const content = new Map<string, { type: string; body: Buffer }>([
    [`/v2/p/manifests/${sha256(manifest)}`, { type: "application/vnd.oci.image.manifest.v1+json", body: manifest }],
    [`/v2/p/blobs/${sha256(components)}`, { type: "application/octet-stream", body: components }],
    [`/v2/p/blobs/${sha256(metadata)}`, { type: "application/octet-stream", body: metadata }],
  ]);
  const reads: string[] = [];
  const host = new URL(
    await listen(
      createServer((req, res) => {
        const found = content.get(req.url ?? "");
        if (found === undefined) {
          res.writeHead(404).end();
          return;
        }
        reads.push(req.url === `/v2/p/blobs/${sha256(components)}` ? "components" : (req.url?.split("/")[3] ?? ""));
        res.writeHead(200, { "content-type": found.type, "content-length": found.body.length }).end(found.body);
      }),
    ),
  ).host;
  return { reads, artifact: { reference: `${host}/p:v1`, digest: sha256(manifest) }, components, metadata };
}

test("with only metadata.yaml asked for, the components layer is never read", async () => {
  // Given a provider artifact of two layers, the components and metadata.yaml
  const registry = await providerRegistry();

  // When only metadata.yaml is asked for
  const files = await fetchProviderFiles(new OciClient({ plainHttp: true }), registry.artifact, {
    only: ["metadata.yaml"],
  });

  // Then it is all that comes back, and the registry saw the manifest and that blob alone
  expect([...files.keys()]).toEqual(["metadata.yaml"]);
  expect(Buffer.from(files.get("metadata.yaml") ?? [])).toEqual(registry.metadata);
  expect(registry.reads.sort()).toEqual(["blobs", "manifests"]);
});

test("without `only`, every titled layer is read, in the manifest's order", async () => {
  const registry = await providerRegistry();

  const files = await fetchProviderFiles(new OciClient({ plainHttp: true }), registry.artifact);

  expect([...files.keys()]).toEqual(["infrastructure-components.yaml", "metadata.yaml"]);
  expect(Buffer.from(files.get("infrastructure-components.yaml") ?? [])).toEqual(registry.components);
  expect(registry.reads).toContain("components");
});
