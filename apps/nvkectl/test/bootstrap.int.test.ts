import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { runCli, tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// site bootstrap's checks against loopback listeners, with real helm, kubectl and clusterctl.
// kind, nerdctl and containerd cannot run here (no container engine): recording stand-ins on
// PATH, in this test only, answer their version and record every call.

let work: string;
let cleanup: () => Promise<void>;
let server: Server;
let port: number;
let toolsPath: string;

/** A stand-in that records its argv (one JSON line per call) and prints a version. */
async function standIn(dir: string, name: string, version: string) {
  const file = join(dir, name);
  await writeFile(
    file,
    `#!/bin/sh
printf '%s\\n' "${name} $*" >> "${join(work, "calls.log")}"
case "$1 $2" in
  "create cluster") shift 4; touch "$2"; chmod 0644 "$2" ;;
  "get clusters") ;;
  *) echo "${name} version ${version}" ;;
esac
`,
  );
  await chmod(file, 0o755);
}

beforeAll(async () => {
  const plane = await useControlPlane();
  ({ path: work, cleanup } = await tempDir("nvkectl-bootstrap-"));
  const fakes = join(work, "fakes");
  await mkdir(fakes);
  await standIn(fakes, "kind", "v0.29.0");
  await standIn(fakes, "nerdctl", "2.1.2");
  await standIn(fakes, "containerd", "v2.1.1");
  toolsPath = `${fakes}:${plane.binDir}:${process.env.PATH}`;
  server = createServer((socket) => socket.end()).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await cleanup();
});

const siteSpec = (hosts: Array<[string, string]>) => `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata:
  name: lab
spec:
  agentPort: ${port}
  hosts:
${hosts.map(([name, ip]) => `    - name: ${name}\n      ip: ${ip}`).join("\n")}
`;

describe("nvkectl site bootstrap", () => {
  test("--dry-run checks everything, then prints the kind call; a real run writes <site>.kubeconfig 0600", async () => {
    const spec = join(work, "sitespec.yaml");
    await writeFile(spec, siteSpec([["node-1", "127.0.0.1"]]));
    const env = { HOME: work, PATH: toolsPath };
    const dry = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], { env });
    expect(dry.stderr).toBe("");
    expect(dry.stdout).toContain(
      `KIND_EXPERIMENTAL_PROVIDER=nerdctl kind create cluster --name lab --kubeconfig ${work}/lab.kubeconfig --wait 5m`,
    );
    expect(await readFile(join(work, "calls.log"), "utf8")).not.toContain("create cluster");
    const real = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec], { env });
    expect(real.exitCode).toBe(0);
    expect(real.stdout.trim()).toBe(`${work}/lab.kubeconfig`);
    expect((await stat(join(work, "lab.kubeconfig"))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(work, "calls.log"), "utf8")).toContain(
      `kind create cluster --name lab --kubeconfig ${work}/lab.kubeconfig --wait 5m`,
    );
  });

  test("every missing tool at once, with versions found and needed; unreachable hosts named", async () => {
    const spec = join(work, "sitespec-2.yaml");
    await writeFile(
      spec,
      siteSpec([
        ["node-1", "127.0.0.1"],
        ["node-2", "127.0.0.2"],
      ]),
    );
    const onlyKubectl = join(work, "only-kubectl");
    await mkdir(onlyKubectl);
    await standIn(onlyKubectl, "kind", "v0.10.0");
    const missing = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: `${onlyKubectl}:/usr/bin:/bin` },
    });
    expect(missing.exitCode).toBe(9);
    for (const line of [
      "nerdctl: not found on PATH (need v1.7.0 or newer)",
      "containerd: not found on PATH (need v1.7.0 or newer)",
      "kind: found v0.10.0, need v0.20.0 or newer",
      "helm: not found on PATH (need v3.12.0 or newer)",
      "clusterctl: not found on PATH (need v1.11.0 or newer)",
    ]) {
      expect(missing.stderr).toContain(line);
    }
    expect(missing.stderr).toContain(`node-2 (127.0.0.2:${port}): ECONNREFUSED`);
    const unreachable = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, "--dry-run"], {
      env: { HOME: work, PATH: toolsPath },
    });
    expect(unreachable.exitCode).toBe(6);
    expect(unreachable.stderr).toContain("1 of 2 hosts do not answer on the nvke-agent port");
    expect(unreachable.stderr).toContain(`node-2 (127.0.0.2:${port}): ECONNREFUSED`);
    expect(unreachable.stderr).not.toContain("node-1 (");
  });

  test("a link planted where <site>.kubeconfig goes is refused before kind runs; what it points to is untouched", async () => {
    const shared = join(work, "shared");
    await mkdir(shared);
    const spec = join(shared, "sitespec.yaml");
    await writeFile(spec, siteSpec([["node-1", "127.0.0.1"]]));
    await writeFile(join(work, "victim"), "precious\n");
    await chmod(join(work, "victim"), 0o644);
    await symlink(join(work, "victim"), join(shared, "lab.kubeconfig"));
    const before = await readFile(join(work, "calls.log"), "utf8").catch(() => "");
    for (const dryRun of [["--dry-run"], []]) {
      const refused = await runCli("nvkectl", ["site", "bootstrap", "--sitespec", spec, ...dryRun], {
        env: { HOME: work, PATH: toolsPath },
      });
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(`the site kubeconfig ${shared}/lab.kubeconfig is a symbolic link`);
    }
    const after = await readFile(join(work, "calls.log"), "utf8");
    expect(after.slice(before.length)).not.toContain("create cluster");
    expect(await readFile(join(work, "victim"), "utf8")).toBe("precious\n");
    expect((await stat(join(work, "victim"))).mode & 0o777).toBe(0o644);
  });
});
