import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, stat } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runProcess } from "./processes.ts";
import type { SandboxStatus } from "./sandbox.ts";

// `sandbox up|status|env|down` as a user runs them, in a directory and HOME of the test's
// own: the operator's flow works with the RBAC it was given (and no more), and `down`
// leaves no process, port or file behind.

const cli = join(repoRoot, "tooling/sandbox/src/cli.ts");
let work: { path: string; cleanup: () => Promise<void> };
let dir: string;
let home: string;
let env: NodeJS.ProcessEnv;
let binDir: string;

const sandbox = (...args: string[]) =>
  runProcess(process.execPath, ["--conditions=source", cli, ...args], { env, timeoutMs: 120_000 });

beforeAll(async () => {
  binDir = (await useControlPlane()).binDir;
  work = await tempDir("nodekit-sandbox-test-");
  dir = join(work.path, "sandbox");
  home = join(work.path, "home");
  await mkdir(home);
  env = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    NODEKIT_SANDBOX_DIR: dir,
    NODEKIT_SANDBOX_CLI: "pnpm sandbox",
    // The test's own kubectl calls keep their discovery cache out of HOME, so HOME shows what the sandbox wrote there.
    KUBECACHEDIR: join(work.path, "kube-cache"),
  };
});

afterAll(async () => {
  await sandbox("down");
  await work?.cleanup();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const portOf = (url: string) => Number(new URL(url).port);
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

describe("the sandbox", () => {
  let status: SandboxStatus;

  test("up brings up the site, the controller and an nvkectl site, and says how to use them; a second up finds them", async () => {
    const first = await sandbox(
      "up",
      "--bin-dir",
      binDir,
      "--provision-ms",
      "500",
      "--delete-ms",
      "300",
      "--node-ms",
      "100",
    );
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^The NVKE sandbox is up \(\d+\.\d s\)\. Everything listens on 127\.0\.0\.1; all of it is in /,
    );
    expect(first.stdout).toContain(`  export NVKECTL_CONFIG=${dir}/nvkectl/config.yaml PATH=${dir}/bin:$PATH\n`);
    expect(first.stdout).toContain("Stop it (no process, port or file is left): pnpm sandbox down\n");
    expect(first.stdout).toMatch(/site cluster {9}https:\/\/127\.0\.0\.1:\d+ /);
    expect(first.stdout).toMatch(/NVKE controller {6}http:\/\/127\.0\.0\.1:\d+ /);

    const second = await sandbox("up", "--bin-dir", binDir);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/testenv: already running at/);
    expect(second.stderr).toMatch(/NVKE controller: already running at/);
    const urls = (text: string) => text.match(/https?:\/\/127\.0\.0\.1:\d+/g);
    expect(urls(second.stdout)).toEqual(urls(first.stdout));

    const result = await sandbox("status", "-o", "json");
    expect(result.exitCode).toBe(0);
    status = JSON.parse(result.stdout) as SandboxStatus;
    expect(status).toMatchObject({ running: "all", problems: [], tenants: [], nvkectl: { site: "sandbox" } });
  });

  test("the operator's nvkectl flow works, with the operator's RBAC only; the tenant answers kubectl", async () => {
    // Given the shell the env lines make
    const lines = await sandbox("env");
    expect(lines.exitCode).toBe(0);
    const run = (script: string) =>
      runProcess("bash", ["-euo", "pipefail", "-c", `${lines.stdout}\ncd ${JSON.stringify(repoRoot)}\n${script}`], {
        env,
        timeoutMs: 60_000,
      });

    // When the operator publishes the releases and creates a cluster
    const flow = await run(`
      nvkectl create machineimage -f examples/machineimage.yaml
      nvkectl create clusterrelease -f examples/clusterrelease.yaml
      nvkectl create nodepoolrelease -f examples/nodepoolrelease.yaml
      nvkectl create cluster -f examples/capd-cluster.yaml --wait --timeout 60s -o json | jq -r .status.phase
      nvkectl get providers
      nvkectl get kubeconfig capd-demo --output-file "$HOME/capd-demo.kubeconfig"
      stat -c %a "$HOME/capd-demo.kubeconfig"
      kubectl --kubeconfig "$HOME/capd-demo.kubeconfig" get namespaces -o name
    `);

    // Then each step worked, as the operator, with a token minted on real RBAC
    expect(flow.exitCode, flow.stderr).toBe(0);
    expect(flow.stdout).toContain("Ready\n");
    expect(flow.stdout).toMatch(/\ncapd +CONFIGURED +UNSUPPORTED +<none>\n/);
    expect(flow.stdout).toMatch(/\n600\n/);
    expect(flow.stdout).toContain("namespace/default\n");

    // And the operator may do what docs/auth.md grants, and not more
    const canI = async (...args: string[]) =>
      (
        await runProcess("kubectl", ["--kubeconfig", `${dir}/operator.kubeconfig`, "auth", "can-i", ...args], { env })
      ).stdout.trim();
    expect(await canI("get", "configmap/nvke-auth-config", "-n", "nke-controller")).toBe("yes");
    expect(await canI("create", "serviceaccounts/nke-client", "--subresource=token", "-n", "nke-clients")).toBe("yes");
    expect(await canI("get", "secrets", "-n", "nvke-clusters")).toBe("yes");
    expect(await canI("get", "configmap/other", "-n", "nke-controller")).toBe("no");
    expect(await canI("list", "secrets", "--all-namespaces")).toBe("no");
    expect(await canI("*", "*")).toBe("no");

    // And a tenant API server runs for the Ready cluster
    const now = JSON.parse((await sandbox("status", "-o", "json")).stdout) as SandboxStatus;
    expect(now.tenants).toEqual([
      { cluster: "capd-demo", server: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/), pids: expect.any(Array) },
    ]);
    status = now;
    const text = await sandbox("status");
    expect(text.stdout).toMatch(/\n {4}capd-demo +https:\/\/127\.0\.0\.1:\d+ {3}pids \d+, \d+\n/);
  });

  test("down leaves no process, port or file behind, and nothing in HOME", async () => {
    // Given everything that runs, and where it listens
    const pids = [
      status.site?.pid,
      status.site?.etcd,
      status.site?.kubeApiserver,
      status.controller?.pid,
      ...status.tenants.flatMap((tenant) => tenant.pids),
    ].filter((pid): pid is number => typeof pid === "number");
    expect(pids).toHaveLength(6); // the site supervisor, etcd, kube-apiserver; the emulator; the tenant's etcd, kube-apiserver
    expect(pids.filter(alive)).toEqual(pids);
    const ports = [status.site?.server ?? "", status.controller?.url ?? "", ...status.tenants.map((t) => t.server)].map(
      portOf,
    );

    // When it is taken down
    const result = await sandbox("down");
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`sandbox: stopped; removed ${dir}\n`);
    expect(result.stderr).not.toMatch(/leftover/);

    // Then nothing is left
    expect(pids.filter(alive)).toEqual([]);
    for (const port of ports) expect(await portOpen(port)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    const mentions = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes(dir));
    expect(mentions).toEqual([]);
    // HOME got no nvkectl config and no token cache: the sandbox kept them in its directory
    expect(await readdir(home)).toEqual(["capd-demo.kubeconfig"]);
    expect((await stat(join(home, "capd-demo.kubeconfig"))).mode & 0o777).toBe(0o600);

    // And status says so; a second down is fine
    const after = await sandbox("status");
    expect([after.exitCode, after.stdout]).toEqual([3, `not running (${dir})\n`]);
    expect((await sandbox("down")).exitCode).toBe(0);
  });
});
