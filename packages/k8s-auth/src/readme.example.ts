// Generated from packages/k8s-auth/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { createTokenProvider, defaultTokenCacheDir } from "@nodekit/k8s-auth";

const tokens = createTokenProvider({
  site: "lab", // the cache is kept per site
  kubeconfig: "./lab.kubeconfig", // the site cluster, or a KubeConfig you loaded
  cacheDir: defaultTokenCacheDir(), // $XDG_CACHE_HOME/nvkectl/tokens
  log: (event) => console.error(`debug: ${event.message}`),
});
const token = await tokens.token(); // undefined when auth is off on this site
const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
const response = await fetch("http://10.0.0.5:30080/api/v1/clusters", { headers });
if (response.status === 401) await tokens.invalidate(); // then retry once with a fresh token

export {};
