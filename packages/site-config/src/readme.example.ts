// Generated from packages/site-config/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { writeFile } from "node:fs/promises";
import { loadConfig, resolveKubeconfig, resolveSite, setSite, updateConfig, useSite } from "@nodekit/site-config";

const location = { env: { HOME: "/tmp/demo", XDG_CONFIG_HOME: "/tmp/demo/.config" }, cwd: "/tmp" };
await writeFile("/tmp/lab.kubeconfig", "apiVersion: v1\nkind: Config\n");
const kubeconfig = await resolveKubeconfig("lab.kubeconfig", location); // /tmp/lab.kubeconfig, absolute
const { created, activated } = await updateConfig(
  (config) => setSite(config, { name: "lab", url: "http://10.0.0.5:30080", kubeconfig }),
  location,
);
console.log(created, activated); // true true: the first site becomes active
const { config } = await loadConfig(location);
console.log(resolveSite(config, process.env.NVKECTL_SITE).kubeconfig); // /tmp/lab.kubeconfig
console.log(useSite(config, "lab").config.activeSite); // the pure core: values in, values out

export {};
