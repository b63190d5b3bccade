// Generated from packages/sitespec/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { formatProblem } from "@nodekit/errors";
import { generateSiteSpec } from "@nodekit/sitespec";

const csvText = "name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.11,\nnode-2,10.0.0.12,\n";
const { yaml, problems } = generateSiteSpec({ csvText, source: "hosts.csv", siteName: "my-site" });

for (const problem of problems) console.error(formatProblem(problem));
if (yaml !== undefined) process.stdout.write(yaml);
else process.exitCode = 3;

export {};
