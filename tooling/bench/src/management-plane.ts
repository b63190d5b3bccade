import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";

// What the benches that read an NVKE management plane start (bench.ts's NVKE cases,
// all-sites.ts): a real kube-apiserver (tooling/testenv) with auth on, and NVKE controller
// emulators on it, each its own process (so that its CPU is not the CLI's), seeded with
// clusters and configured as an nvkectl site. Also the one way a bench reads the URL an
// emulator (NVKE or NodeRings) serves on: the first line it prints.

/**
 * Starts `argv` (an emulator's main.ts and its flags) under node in `cwd`, and resolves with
 * the child and the URL it prints as its first stdout line; rejects, the child ended, when it
 * exits before printing one.
 */
export async function spawnServer(
  cwd: string,
  argv: readonly string[],
  what: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, argv, { cwd, stdio: ["ignore", "pipe", "ignore"] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let buffered = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const line = buffered.split("\n")[0];
      if (buffered.includes("\n") && line) resolveUrl(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`${what} exited with ${code}`)));
  }).catch((error: unknown) => {
    child.kill("SIGTERM");
    throw error;
  });
  return { child, url };
}

export interface ManagementPlaneOptions {
  /** The repository's root (the emulators run from its sources). */
  root: string;
  /** A temporary directory of the bench's: the testenv's state and the emulators' go in it. */
  work: string;
  /** kubectl's path (the auth objects are applied with it). */
  kubectl: string;
  /** The built nvkectl's bin/run.js, and the environment it runs in (its HOME is the sites'). */
  nvkectl: string;
  env: Record<string, string>;
}

export interface ManagementPlane {
  kubeconfig: string;
  /**
   * Starts an emulator for site `name`, seeds `clusters` clusters named `namePrefix`-…, and
   * configures it with `nvkectl config set-site`; resolves with its URL.
   */
  startSite(name: string, clusters: number, namePrefix?: string): Promise<string>;
  /** Stops every emulator and the testenv (idempotent, synchronous: fit for an exit handler). */
  stop(): void;
}

/**
 * Brings the testenv up and applies what the emulators' auth needs (their namespaces, the
 * client ServiceAccount, the audience `nvke-bench`). Throws, with the testenv down again,
 * when either fails.
 */
export function startManagementPlane(options: ManagementPlaneOptions): ManagementPlane {
  const { root, work, kubectl, nvkectl, env } = options;
  const node = process.execPath;
  const testenvEnv = { ...process.env, NODEKIT_TESTENV_STATE_DIR: join(work, "testenv") };
  const testenvCli = join(root, "tooling/testenv/src/cli.ts");
  const emulators: ChildProcess[] = [];
  const stop = () => {
    for (const child of emulators.splice(0)) child.kill("SIGTERM");
    spawnSync(node, [testenvCli, "down"], { cwd: root, env: testenvEnv, stdio: "ignore" });
  };

  const up = spawnSync(node, [testenvCli, "up"], { cwd: root, env: testenvEnv, encoding: "utf8" });
  const kubeconfig = up.stdout.trim().split("\n").at(-1) ?? "";
  if (up.status !== 0 || kubeconfig === "") {
    stop();
    throw new Error(`testenv did not start: ${up.stderr.trim().split("\n").at(-1)}`);
  }
  const applied = spawnSync(kubectl, ["--kubeconfig", kubeconfig, "apply", "-f", "-"], {
    input: JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "nke-controller" } },
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "nke-clients" } },
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { namespace: "nke-clients", name: "nke-client" } },
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { namespace: "nke-controller", name: "nvke-auth-config" },
          data: { audience: "nvke-bench" },
        },
      ],
    }),
    encoding: "utf8",
  });
  if (applied.status !== 0) {
    stop();
    throw new Error(`kubectl apply: ${applied.stderr}`);
  }

  const startSite = async (name: string, clusters: number, namePrefix = name): Promise<string> => {
    const { child, url } = await spawnServer(
      root,
      [
        "tooling/nvke-emulator/src/main.ts",
        "--kubeconfig",
        kubeconfig,
        "--port",
        "0",
        "--state",
        join(work, `${name}.json`),
      ],
      `the emulator of ${name}`,
    );
    emulators.push(child);
    const seeded = await fetch(`${url}/_emulator/seed`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clusters, namePrefix }),
    });
    if (!seeded.ok) throw new Error(`seeding ${clusters} clusters on ${name}: HTTP ${seeded.status}`);
    const set = spawnSync(node, [nvkectl, "config", "set-site", name, "--url", url, "--kubeconfig", kubeconfig], {
      env,
    });
    if (set.status !== 0) throw new Error(`nvkectl config set-site ${name}: ${set.stderr}`);
    return url;
  };
  return { kubeconfig, startSite, stop };
}
