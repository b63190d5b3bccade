// Generated from packages/release/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { OciClient, envCredentials } from "@nodekit/oci";
import { readFile } from "node:fs/promises";
import {
  generateSigningKeyPair,
  loadReleasePolicy,
  localKeySigner,
  parseReleaseDescription,
  publishRelease,
  verifyRelease,
} from "@nodekit/release";

const client = new OciClient({ credentials: envCredentials() });
const key = generateSigningKeyPair(); // ECDSA P-256, as cosign generate-key-pair
const { value: description, problems } = parseReleaseDescription(await readFile("release.yaml", "utf8"), { source: "release.yaml" });
if (description === undefined) throw new Error(`release.yaml has ${problems.length} problems`);
const published = await publishRelease({ client, reference: "registry.example.com/nvke/release:1.4.0", description, signer: localKeySigner(key.privateKeyPem) });
const policy = await loadReleasePolicy("release-policy.yaml");
const verified = await verifyRelease({ client, reference: "registry.example.com/nvke/release:1.4.0", policy });
console.log(verified.reference); // registry.example.com/nvke/release@sha256:… — pin export and install to this

export {};
