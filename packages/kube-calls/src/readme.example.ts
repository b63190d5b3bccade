// Generated from packages/kube-calls/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { assertKubeconfig, helmCall, isolatedToolEnv, kubectlCall } from "@nodekit/kube-calls";
import { formatCall } from "@nodekit/process";

const target = { kubeconfig: "lab.kubeconfig", context: "admin@lab", requestTimeout: "10s" };
await assertKubeconfig(target.kubeconfig, "the lab's kubeconfig"); // KUBECONFIG_NOT_FOUND when it is not a file
const get = kubectlCall(target, ["get", "storageclass", "lab-local", "-o", "name"]);
const install = helmCall(target, ["upgrade", "--install", "spire", "spire", "--repo", "https://spiffe.github.io/helm-charts-hardened"], isolatedToolEnv("/tmp/helm-home"));
console.log(formatCall(get)); // kubectl --kubeconfig lab.kubeconfig --context admin@lab --request-timeout=10s get storageclass …
console.log(formatCall(install));

export {};
