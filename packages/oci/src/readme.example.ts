// Generated from packages/oci/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { OciClient, defaultCredentials, EMPTY_DESCRIPTOR, EMPTY_JSON, MediaType } from "@nodekit/oci";

const client = new OciClient({ credentials: defaultCredentials(), plainHttp: (host) => host.startsWith("127.0.0.1:") });
const repo = "127.0.0.1:5000/demo/hello";
await client.pushBlob(repo, EMPTY_JSON, MediaType.Empty);
const layer = await client.pushBlob(repo, new TextEncoder().encode("hello"), "text/plain");
const { descriptor } = await client.putManifest(repo, { schemaVersion: 2, mediaType: MediaType.ImageManifest, artifactType: "text/plain", config: EMPTY_DESCRIPTOR, layers: [layer] }, { tag: "v1" });
console.log((await client.resolve(`${repo}:v1`)).digest === descriptor.digest); // true
console.log(new TextDecoder().decode(await client.getBlob(repo, layer.digest))); // hello (its digest checked)

export {};
