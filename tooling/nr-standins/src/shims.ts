import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { K3sConfig } from "./k3s-install.ts";
import type { Recorded } from "./world.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The stand-ins' fixtures: what nr is pointed at instead of a download it cannot make here. */
export const NR_FIXTURES = join(HERE, "..", "fixtures");
/** The tigera operator's manifests, trimmed (`nr cluster register --calico-manifests`). */
export const CALICO_MANIFESTS = join(NR_FIXTURES, "calico");
/** A chart with the Proxmox operator chart's contract (`nr cluster register --operator-chart`). */
export const OPERATOR_CHART = join(NR_FIXTURES, "proxmox-operator");

export interface StandIns {
  /** The directory on PATH with `k3s-install.sh` and `liqoctl` (and `k3s-uninstall.sh` once k3s is "installed"). */
  bin: string;
  /** Where the stand-ins keep their files. */
  state: string;
  /** Every call the stand-ins saw, in order. */
  records(): Promise<Recorded[]>;
  /** What k3s runs with now (`k3s-config.json`), or undefined when it is not installed. */
  k3sConfig(): Promise<K3sConfig | undefined>;
  /** What reached NodeRings' cluster through Liqo's reflection (Secrets, ServiceAccount tokens). */
  reflected(): Promise<Array<{ namespace: string; kind: string; name?: string; data?: Record<string, string> }>>;
}

export interface StandInsOptions {
  /** The agent cluster's admin kubeconfig: what k3s would write to /etc/rancher/k3s/k3s.yaml. */
  kubeconfig: string;
  /** NodeRings' Liqo cluster id (the NodeRings emulator's `platformClusterId`). */
  platformClusterId: string;
  /** The address k3s takes as its node IP (default 10.20.0.11). */
  nodeIp?: string;
}

const SCRIPTS = [
  ["k3s-install.sh", "k3s-install.ts"],
  ["liqoctl", "liqoctl.ts"],
] as const;

let built: Promise<Array<{ path: string; contents: Uint8Array }>> | undefined;

/**
 * Both stand-ins bundled by esbuild, in one build, once a process (a fleet test writes
 * stand-ins for ten VMs): the files, in memory, that each VM's lib/ gets a copy of.
 */
function bundles(): Promise<Array<{ path: string; contents: Uint8Array }>> {
  built ??= import("esbuild").then(async ({ build }) => {
    const result = await build({
      entryPoints: SCRIPTS.map(([, script]) => join(HERE, script)),
      outdir: "/stand-ins",
      outExtension: { ".js": ".mjs" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      conditions: ["source"],
      logLevel: "silent",
      write: false,
    });
    return result.outputFiles.map((file) => ({ path: file.path, contents: file.contents }));
  });
  built.catch(() => {
    built = undefined;
  });
  return built;
}

const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * The recording stand-ins for the k3s installer and liqoctl, on PATH as `k3s-install.sh`
 * and `liqoctl` in `<dir>/stand-ins/bin`: k3s-install.ts and liqoctl.ts, each as strict as
 * the program it stands for (their headers say which upstream behaviour each models, and
 * where it is documented). Each records its argv and environment in
 * `<dir>/stand-ins/state/records.jsonl`, then acts on the agent cluster (`kubeconfig`) as
 * the real one would. Writing them again (the same `dir`) keeps what they recorded.
 */
export async function standIns(dir: string, options: StandInsOptions): Promise<StandIns> {
  const bin = join(dir, "stand-ins", "bin");
  const state = join(dir, "stand-ins", "state");
  await mkdir(bin, { recursive: true, mode: 0o700 });
  await mkdir(state, { recursive: true, mode: 0o700 });
  await writeFile(join(state, "records.jsonl"), "", { flag: "a" });
  const env = {
    NR_STANDIN_KUBECONFIG: options.kubeconfig,
    NR_STANDIN_STATE: state,
    NR_STANDIN_BIN: bin,
    NR_STANDIN_PLATFORM_CLUSTER_ID: options.platformClusterId,
    NR_STANDIN_NODE_IP: options.nodeIp ?? "10.20.0.11",
  };
  const exports = Object.entries(env)
    .map(([name, value]) => `${name}=${shellQuote(value)}`)
    .join(" ");
  // Each runs as one bundled file (lib/<script>.mjs): from its TypeScript sources, a start
  // cost 0.15 CPU-s (type stripping, a module graph to resolve), bundled 0.04, and nr starts
  // them hundreds of times in a test run.
  const lib = join(dir, "stand-ins", "lib");
  await mkdir(lib, { recursive: true });
  for (const file of await bundles()) await writeFile(join(lib, basename(file.path)), file.contents);
  for (const [name, script] of SCRIPTS) {
    const bundle = join(lib, script.replace(/\.ts$/, ".mjs"));
    // nr passes the programs it runs only a few variables: the shim sets the stand-in's own.
    await writeFile(
      join(bin, name),
      `#!/bin/sh\n# A stand-in (${join(HERE, script)}, bundled): not the real program.\nexport ${exports}\nexec ${shellQuote(process.execPath)} ${shellQuote(bundle)} "$@"\n`,
      { mode: 0o755 },
    );
  }
  const readJsonl = async <T>(file: string): Promise<T[]> => {
    const text = await readFile(join(state, file), "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as T);
  };
  return {
    bin,
    state,
    records: () => readJsonl<Recorded>("records.jsonl"),
    async k3sConfig() {
      const text = await readFile(join(state, "k3s-config.json"), "utf8").catch(() => undefined);
      return text === undefined ? undefined : (JSON.parse(text) as K3sConfig);
    },
    reflected: () => readJsonl("noderings-cluster.jsonl"),
  };
}
