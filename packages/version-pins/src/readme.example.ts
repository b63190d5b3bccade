// Generated from packages/version-pins/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { formatProblem } from "@nodekit/errors";
import { offlinePins, parsePins, requireArtifact } from "@nodekit/version-pins";

const resolved = offlinePins(); // the shipped defaults, the pins a registration uses offline
for (const warning of resolved.warnings) console.error(`warning: ${warning}`); // not platform-validated
console.log(resolved.pins.tools.k3s.version, resolved.hash); // v1.33.5+k3s1 sha256:…
const helm = requireArtifact(resolved, "helm", "amd64"); // fails closed when there is no digest
console.log(helm.url, helm.sha256, helm.member); // …/helm-v3.18.6-linux-amd64.tar.gz 3f43c0aa… linux-amd64/helm

const { problems } = parsePins("schemaVersion: 1\nname: lab\ntools: {}\n", { source: "pins.yaml" });
for (const problem of problems) console.error(formatProblem(problem)); // pins.yaml:3: field tools.k3s: is required …

export {};
