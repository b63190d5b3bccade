// Generated from packages/stack-config/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { parseStackConfig, stackCredentials } from "@nodekit/stack-config";

const text = "apiVersion: nvke.io/v1alpha1\nkind: StackConfig\nnico:\n  endpoint: REPLACE_NICO_API_ENDPOINT\n  organizationId: org-1\n  apiName: nvke\nclusterAPI:\n  providerRepository: ./providers\n";
const parsed = parseStackConfig(text, { source: "stack.yaml" });
for (const problem of [...parsed.problems, ...parsed.unfilled]) console.log(problem.line, problem.path, problem.message);
// 4 [ 'nico', 'endpoint' ] is still a placeholder: fill it in
if (parsed.config) console.log(stackCredentials(parsed.config).nicoApiKey.length);

export {};
