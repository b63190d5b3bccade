// Generated from packages/kube-connections/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { keepConnections } from "@nodekit/kube-connections";

const kc = keepConnections(new KubeConfig());
kc.loadFromFile("lab.kubeconfig");
const core = kc.makeApiClient(CoreV1Api);
for (let poll = 0; poll < 10; poll++) {
  // Ten requests, one TLS handshake: every request of the lab's cluster and user goes over one connection.
  console.log((await core.listNamespace()).items.length);
}

export {};
