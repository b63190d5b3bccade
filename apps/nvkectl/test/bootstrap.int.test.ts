import { chmod, mkdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { repoRoot, runCli, tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CONTROLLER_NODE_PORT, KIND_NODE_IMAGE } from "../src/services/bootstrap.ts";
import { type EngineStandIns, writeEngineStandIns } from "./kind-standin.ts";

// site bootstrap's checks against a listener on this machine, with real helm, kubectl and
// clusterctl. kind, nerdctl and containerd cannot run here (no container engine): recording
// stand-ins as strict as they are (kind-standin.ts, which cites what it models) are on PATH,
// in this test only.

let work: string;
let cleanup: () => Promise<void>;
let server: Server;
let port: number;
let toolsPath: string;
let engine: EngineStandIns;
/** A non-loopback address of this machine (the test network namespace's own, 198.51.100.1). */
let hostAddress: string;

beforeAll(async () => {
  const plane = await useControlPlane();
  ({ path: work, cleanup } = await tempDir("nvkectl-bootstrap-"));
  engine = await writeEngineStandIns(join(work, "fakes"));
  toolsPath = `${engine.dir}:${plane.binDir}:${process.env.PATH}`;
  const found = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal);
  if (found === undefined)
    throw new Error("this test needs a non-loopback IPv4 address (pnpm test:integration has one)");
  hostAddress = found.address;
  server = createServer((socket) => socket.end()).listen(0, hostAddress);
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await cleanup();
});

const siteSpec = (hosts: Array<[string, string]>, name = "lab") => `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata:
  name: ${name}
spec:
  agentPort: ${port}
  hosts:
${hosts.map(([host, ip]) => `    - name: ${host}\n      ip: ${ip}`).join("\n")}
`;

const calls = async () =>
  (await readFile(engine.callsLog, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { tool: string; args: string[]; provider?: string });
const kindMutations = async () =>
  (await calls()).filter((c) => c.tool === "kind" && (c.args[0] === "create" || c.args[0] === "export"));

describe("nvkectl site bootstrap", () => {
  test("the kind cluster serves other machines: pinned node image, the NodePort mapped, the API server on this host's address", async () => {
    const dir = join(work, "serve");
    await mkdir(dir);
    const spec = join(dir, "sitespec.yaml");
    await writeFile(spec, siteSpec([["node-1", hostAddress]]));
    const env = { HOME: work, PATH: toolsPath };
    // The dry run checks, then names the file it would write and the kind call
    const dry = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], { env });
    expect(dry.stderr).toBe("");
    expect(dry.stdout).toContain(
      `# write ${dir}/lab.kind.yaml (the kind cluster's configuration: node image ${KIND_NODE_IMAGE}, API server on ${hostAddress}:6443, port 30080 mapped to the node)`,
    );
    expect(dry.stdout).toContain(
      `KIND_EXPERIMENTAL_PROVIDER=nerdctl kind create cluster --name lab --config ${dir}/lab.kind.yaml --kubeconfig ${dir}/lab.kubeconfig --wait 5m`,
    );
    await expect(stat(join(dir, "lab.kind.yaml"))).rejects.toThrow("ENOENT");
    expect(await kindMutations()).toEqual([]);
    const document = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run", "-o", "json"], {
      env,
    });
    expect(JSON.parse(document.stdout)).toMatchObject({
      apiVersion: "plan.nodekit.dev/v1",
      observations: { site: "lab", apiServerAddress: hostAddress, nodeImage: KIND_NODE_IMAGE },
    });

    // The real run: kind (as strict as kind about its config) creates the cluster
    const real = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec], { env });
    expect(real.stderr).toBe("");
    expect(real.exitCode).toBe(0);
    expect(real.stdout.trim()).toBe(`${dir}/lab.kubeconfig`);
    expect((await stat(join(dir, "lab.kubeconfig"))).mode & 0o777).toBe(0o600);
    const config = load(await readFile(join(dir, "lab.kind.yaml"), "utf8"));
    expect(config).toEqual({
      kind: "Cluster",
      apiVersion: "kind.x-k8s.io/v1alpha4",
      networking: { apiServerAddress: hostAddress, apiServerPort: 6443 },
      nodes: [
        {
          role: "control-plane",
          image: KIND_NODE_IMAGE,
          extraPortMappings: [{ containerPort: 30080, hostPort: 30080, listenAddress: "0.0.0.0", protocol: "TCP" }],
        },
      ],
    });
    expect(KIND_NODE_IMAGE).toMatch(/^kindest\/node:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}$/);
    const kubeconfig = load(await readFile(join(dir, "lab.kubeconfig"), "utf8")) as {
      clusters: Array<{ cluster: { server: string } }>;
    };
    expect(kubeconfig.clusters[0]?.cluster.server).toBe(`https://${hostAddress}:6443`);
    const state = JSON.parse(await readFile(join(engine.dir, "kind-state.json"), "utf8"));
    expect(state.clusters.lab.certSANs).toEqual(["localhost", hostAddress]);
    expect((await kindMutations()).map((c) => c.provider)).toEqual(["nerdctl"]);
  });

  test("the NodePort kind maps is the one the shipped chart exposes", async () => {
    const values = load(await readFile(join(repoRoot, "deploy/nico/nvke-controller/values.yaml"), "utf8")) as {
      service: { nodePort: number };
    };
    expect(CONTROLLER_NODE_PORT).toBe(values.service.nodePort);
  });

  test("a re-run whose kubeconfig is gone restores it with kind export kubeconfig; with it in place nothing runs", async () => {
    const dir = join(work, "serve");
    const spec = join(dir, "sitespec.yaml");
    const env = { HOME: work, PATH: toolsPath };
    await rm(join(dir, "lab.kubeconfig"));
    const before = (await kindMutations()).length;
    const dry = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], { env });
    expect(dry.stdout).toContain(
      `# [1/1] kind-cluster: kind cluster lab exists already; its kubeconfig ${dir}/lab.kubeconfig is gone: restored`,
    );
    expect(dry.stdout).toContain(
      `KIND_EXPERIMENTAL_PROVIDER=nerdctl kind export kubeconfig --name lab --kubeconfig ${dir}/lab.kubeconfig`,
    );
    const restored = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec], { env });
    expect(restored.exitCode).toBe(0);
    expect((await stat(join(dir, "lab.kubeconfig"))).mode & 0o777).toBe(0o600);
    const kubeconfig = load(await readFile(join(dir, "lab.kubeconfig"), "utf8")) as {
      clusters: Array<{ cluster: { server: string } }>;
    };
    expect(kubeconfig.clusters[0]?.cluster.server).toBe(`https://${hostAddress}:6443`);
    expect((await kindMutations()).slice(before).map((c) => c.args.slice(0, 2).join(" "))).toEqual([
      "export kubeconfig",
    ]);

    const again = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec], { env });
    expect(again.exitCode).toBe(0);
    expect((await kindMutations()).length).toBe(before + 1);
  });

  test("every missing tool at once, with versions found and needed; containerd must run, not merely be installed", async () => {
    const spec = join(work, "sitespec-2.yaml");
    await writeFile(
      spec,
      siteSpec([
        ["node-1", hostAddress],
        ["node-2", "127.0.0.2"],
      ]),
    );
    // kind older than the pinned node image's release, containerd installed but not running
    const old = await writeEngineStandIns(join(work, "old-engine"), { kindVersion: "v0.23.0" });
    await old.setContainerd({ running: false });
    const missing = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: `${old.dir}:/usr/bin:/bin` },
    });
    expect(missing.exitCode).toBe(9);
    for (const line of [
      "kind: found v0.23.0, need v0.30.0 or newer",
      'containerd: not running, or nerdctl cannot reach it (time="2026-03-02T10:15:00Z" level=fatal msg="cannot access containerd socket \\"/run/containerd/containerd.sock\\": no such file or directory"); need a running containerd v1.7.0 or newer (systemctl start containerd)',
      "helm: not found on PATH (need v3.12.0 or newer)",
      "clusterctl: not found on PATH (need v1.11.0 or newer)",
    ]) {
      expect(missing.stderr).toContain(line);
    }
    expect(missing.stderr).toContain(`node-2 (127.0.0.2:${port}): ECONNREFUSED`);
    await old.setContainerd({ running: true, version: "v1.6.9" });
    const oldDaemon = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: `${old.dir}:/usr/bin:/bin` },
    });
    expect(oldDaemon.stderr).toContain("containerd: the running daemon is v1.6.9, need v1.7.0 or newer");
    // Without nerdctl, containerd cannot be asked: nerdctl alone is named.
    const bare = join(work, "bare");
    await mkdir(bare);
    const none = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: `${bare}:/usr/bin:/bin` },
    });
    expect(none.stderr).toContain("nerdctl: not found on PATH (need v1.7.0 or newer)");
    expect(none.stderr).not.toContain("containerd:");

    const unreachable = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: toolsPath },
    });
    expect(unreachable.exitCode).toBe(6);
    expect(unreachable.stderr).toContain("1 of 2 hosts do not answer on the nvke-agent port");
    expect(unreachable.stderr).toContain(`node-2 (127.0.0.2:${port}): ECONNREFUSED`);
    expect(unreachable.stderr).not.toContain("node-1 (");
  });

  test("--api-server-address must be one address of this host: 0.0.0.0 is refused before kind runs", async () => {
    const spec = join(work, "sitespec-3.yaml");
    await writeFile(spec, siteSpec([["node-1", hostAddress]], "other"));
    const before = (await kindMutations()).length;
    const refused = await runCli(
      "nvkectl",
      ["site", "bootstrap", "--sitespec", spec, "--api-server-address", "0.0.0.0"],
      { env: { HOME: work, PATH: toolsPath } },
    );
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--api-server-address "0.0.0.0" is not an address of this host');
    expect((await kindMutations()).length).toBe(before);
  });

  test("a link planted where <site>.kubeconfig goes is refused before kind runs; what it points to is untouched", async () => {
    const shared = join(work, "shared");
    await mkdir(shared);
    const spec = join(shared, "sitespec.yaml");
    await writeFile(spec, siteSpec([["node-1", hostAddress]], "linked"));
    await writeFile(join(work, "victim"), "precious\n");
    await chmod(join(work, "victim"), 0o644);
    await symlink(join(work, "victim"), join(shared, "linked.kubeconfig"));
    const before = (await kindMutations()).length;
    for (const dryRun of [["--dry-run"], []]) {
      const refused = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, ...dryRun], {
        env: { HOME: work, PATH: toolsPath },
      });
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(`the site kubeconfig ${shared}/linked.kubeconfig is a symbolic link`);
    }
    expect((await kindMutations()).length).toBe(before);
    expect(await readFile(join(work, "victim"), "utf8")).toBe("precious\n");
    expect((await stat(join(work, "victim"))).mode & 0o777).toBe(0o644);
  });
});
