// @runs-long 110 s (sandbox up, twice): started before the other files, see tooling/testenv/src/sequencer.ts.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { generateSigningKeyPair } from "@nodekit/release";
import { exists, runCli, tempDir } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { isAlive } from "@nodekit/testenv/supervisor";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { policyText } from "./release.ts";
import { down, type SandboxInfo, type SandboxStatus, status, up } from "./sandbox.ts";

// `sandbox up` against the real binaries: its registry (the distribution registry, Basic
// auth) holds a release that the built nvkectl verifies under the sandbox's policy, and
// refuses under another key's; without the sandbox's credentials the registry refuses
// nvkectl. A second `up` finds it all up and publishes nothing again. `down` leaves no
// process, port or file — the registry's storage included.

let work: string;
let cleanup: () => Promise<void>;
let dir: string;
let info: SandboxInfo;
let running: SandboxStatus;
const lines: string[] = [];
const log = (line: string) => lines.push(line);

const listening = (host: string) =>
  new Promise<boolean>((resolve) => {
    const [address = "", port = ""] = host.split(":");
    const socket = createConnection({ host: address, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

beforeAll(async () => {
  const { binDir } = await useControlPlane();
  ({ path: work, cleanup } = await tempDir("sandbox-up-"));
  dir = join(work, "sandbox");
  info = await up({ dir, log, binDir, timing: { provisionMs: 200, deleteMs: 100, nodeMs: 100 } });
  running = await status({ dir, log });
}, 600_000);

afterAll(async () => {
  if (dir !== undefined && (await exists(dir))) await down({ dir, log }).catch(() => undefined);
  await cleanup?.();
});

describe("sandbox up: the registry and its signed release", () => {
  test("status names the registry, the release (its SPIRE stand-in) and the controller manager's stand-in", () => {
    expect(running.problems).toEqual([]);
    expect(running.running).toBe("all");
    expect(running.registry?.host).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(running.release?.tagReference).toBe(`${running.registry?.host}/nvke/release:0.9.0`);
    expect(running.release?.note).toContain("stand-in for the SPIRE chart");
    expect(running.controllerStandIn?.note).toContain("stand-in for kube-controller-manager");
  });

  test("nvkectl release verify accepts it under the sandbox's policy, with the credentials sandbox env names", async () => {
    const env = { HOME: work, DOCKER_CONFIG: join(dir, "registry", "docker") };
    const verified = await runCli(
      "nvkectl",
      ["release", "verify", info.release.tagReference, "--policy", info.release.policy, "--plain-http"],
      { env },
    );
    expect(verified.stderr).toContain("signed by key nvke-sandbox");
    expect(verified.exitCode).toBe(0);
    expect(verified.stdout.trim()).toBe(info.release.pinnedReference);
    // The password is in the docker config (0600) and nowhere the sandbox prints
    const password = (await readFile(join(dir, "registry", "password"), "utf8")).trim();
    const envFile = await readFile(info.nvkectl.envFile, "utf8");
    expect(envFile).toContain(`export DOCKER_CONFIG='${join(dir, "registry", "docker")}'`);
    expect(envFile).toContain(`export NVKE_SANDBOX_RELEASE='${info.release.tagReference}'`);
    expect(envFile).toContain(`export NVKE_SANDBOX_POLICY='${join(dir, "policy.yaml")}'`);
    for (const text of [envFile, JSON.stringify(info), JSON.stringify(running), lines.join("\n"), verified.stdout]) {
      expect(text).not.toContain(password);
    }
  });

  test("its nvkectl artifacts are pnpm package's real executables: verify hashes them, export --nvkectl writes one that runs", async () => {
    const env = { HOME: work, DOCKER_CONFIG: join(dir, "registry", "docker") };
    const verified = await runCli(
      "nvkectl",
      ["release", "verify", info.release.tagReference, "--policy", info.release.policy, "--plain-http", "-o", "json"],
      { env },
    );
    expect(verified.exitCode, verified.stderr).toBe(0);
    // Two executables of over 50 MB each are among the bytes hashed
    expect((JSON.parse(verified.stdout) as { bytesChecked: number }).bytesChecked).toBeGreaterThan(100 * 1024 * 1024);
    const file = join(work, "nvkectl-linux-x64");
    const exported = await runCli(
      "nvkectl",
      [
        "release",
        "export",
        info.release.pinnedReference,
        "--plain-http",
        "--nvkectl",
        "linux/amd64",
        "--output-file",
        file,
      ],
      { env },
    );
    expect(exported.exitCode, exported.stderr).toBe(0);
    // The file is the one SHA256SUMS names, and it runs (with no Node.js on PATH)
    const sums = await readFile(join(dir, "release", "SHA256SUMS"), "utf8");
    const digest = createHash("sha256")
      .update(await readFile(file))
      .digest("hex");
    expect(sums).toContain(`${digest}  nvkectl-linux-x64\n`);
    expect(exported.stderr).toContain(`sha256:${digest}`);
    if (process.arch === "x64") {
      const { stdout } = await promisify(execFile)("env", [
        "-i",
        `HOME=${work}`,
        "PATH=/nonexistent",
        file,
        "--version",
      ]);
      expect(stdout).toMatch(/^@nodekit\/nvkectl\/\d+\.\d+\.\d+ linux-x64 node-v22\./);
    }
  }, 300_000);

  test("another key's policy refuses it (exit 1); without the sandbox's credentials the registry refuses (exit 7)", async () => {
    const other = join(work, "other-policy.yaml");
    await writeFile(other, policyText(generateSigningKeyPair().publicKeyPem));
    const untrusted = await runCli(
      "nvkectl",
      ["release", "verify", info.release.tagReference, "--policy", other, "--plain-http"],
      { env: { HOME: work, DOCKER_CONFIG: join(dir, "registry", "docker") } },
    );
    expect(untrusted.exitCode).toBe(1);
    const anonymous = await runCli(
      "nvkectl",
      ["release", "verify", info.release.tagReference, "--policy", info.release.policy, "--plain-http"],
      { env: { HOME: work, DOCKER_CONFIG: join(work, "no-docker-config") } },
    );
    expect(anonymous.exitCode).toBe(7);
  });

  test("a second up finds everything up and publishes nothing again", async () => {
    const published = await readFile(join(dir, "release", "published.json"), "utf8");
    lines.length = 0;
    const again = await up({ dir, log, ...{ binDir: (await useControlPlane()).binDir } });
    expect(again.release).toEqual(info.release);
    expect(again.registry).toEqual(info.registry);
    expect(await readFile(join(dir, "release", "published.json"), "utf8")).toBe(published);
    expect(lines.join("\n")).not.toContain("release: publishing");
  }, 120_000);
});

describe("sandbox status: the controller's auth, as the emulator applies it now", () => {
  const AUTH = { namespace: "nke-controller", name: "nvke-auth-config" };
  /** The audience the emulator itself asks for: its 401 to a bare request names it. */
  const demanded = async () => {
    const answer = await fetch(new URL("/api/v1/clusters", info.controller.url));
    const body = (await answer.json()) as { error?: { message?: string } };
    return { status: answer.status, audience: /audience "([^"]+)"/.exec(body.error?.message ?? "")?.[1] };
  };
  const setAudience = async (audience: string) => {
    const { core } = clientsFor(info.site.adminKubeconfig);
    const configMap = await core.readNamespacedConfigMap(AUTH);
    await core.replaceNamespacedConfigMap({ ...AUTH, body: { ...configMap, data: { audience } } });
  };
  /** The emulator re-reads the ConfigMaps within seconds: ask it until it names `audience`. */
  const untilDemanded = async (audience: string) => {
    for (let tries = 0; tries < 100 && (await demanded()).audience !== audience; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await demanded()).toEqual({ status: 401, audience });
  };

  test("after up: the sandbox's audience, from nke-controller/nvke-auth-config, the one the emulator demands", async () => {
    expect(running.controller?.auth).toEqual({
      mode: "on",
      audience: info.controller.audience,
      source: "nke-controller/nvke-auth-config",
    });
    expect((await demanded()).audience).toBe(info.controller.audience);
  });

  test("after an install set another audience (the controller chart's values): that one, in the API and in the CLI's text", async () => {
    // Given the auth ConfigMap rewritten as the deploy path's nvke-controller chart writes it
    await setAudience("nvke-controller");
    try {
      await untilDemanded("nvke-controller");
      // When status is asked
      const now = await status({ dir, log });
      // Then it reports what the emulator applies, not what up wrote down
      expect(now.controller?.auth).toEqual({
        mode: "on",
        audience: "nvke-controller",
        source: "nke-controller/nvke-auth-config",
      });
      expect(now.controller?.audience).toBe("nvke-controller");
      const cli = await promisify(execFile)(
        process.execPath,
        ["--conditions=source", join(import.meta.dirname, "cli.ts"), "status"],
        { env: { ...process.env, NODEKIT_SANDBOX_DIR: dir } },
      );
      expect(cli.stdout).toContain('auth on, audience "nvke-controller" (from nke-controller/nvke-auth-config)');
      expect(cli.stdout).not.toContain(`audience "${info.controller.audience}"`);
    } finally {
      await setAudience(info.controller.audience);
      await untilDemanded(info.controller.audience);
    }
  }, 60_000);
});

describe("sandbox up: the agent's pretend VM for nr", () => {
  test("a kube-apiserver of its own, serving k3s's service CIDR, apart from the site cluster", async () => {
    expect(running.agent?.kubeconfig).toBe(info.agent.kubeconfig);
    expect(running.agent?.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(running.agent?.server).not.toBe(info.site.server);
    expect(running.agent?.pids.every(isAlive)).toBe(true);
    // The kubeconfig k3s would write: the agent's cluster admin, mode 0600
    const { core } = clientsFor(info.agent.kubeconfig);
    const kubernetes = await core.readNamespacedService({ name: "kubernetes", namespace: "default" });
    expect(kubernetes.spec?.clusterIP).toBe("10.43.0.1");
    expect(((await stat(info.agent.kubeconfig)).mode & 0o777).toString(8)).toBe("600");
  });

  test("the k3s installer's and liqoctl's stand-ins are on PATH only in a shell that evaluated sandbox env", async () => {
    const sh = (script: string) =>
      promisify(execFile)("bash", ["-c", script], { env: { PATH: process.env.PATH ?? "", HOME: work } });
    // up's short form (nvkectl's bin first on PATH), or a normal shell: no stand-in
    const plain = await sh(`PATH=${info.nvkectl.binDir}:$PATH; command -v liqoctl k3s-install.sh nr || true`);
    expect(plain.stdout.trim()).toBe(join(info.nvkectl.binDir, "nr"));
    const evaluated = await sh(
      `. ${info.nvkectl.envFile}; command -v liqoctl k3s-install.sh; echo "$NR_SANDBOX_AGENT_KUBECONFIG"`,
    );
    expect(evaluated.stdout.trim().split("\n")).toEqual([
      join(info.agent.standIns, "liqoctl"),
      join(info.agent.standIns, "k3s-install.sh"),
      info.agent.kubeconfig,
    ]);
    // nr's lock is the sandbox's, never the machine's /run/nr; both CLIs' kubectl caches are the sandbox's, never ~/.kube/cache
    const nr = await readFile(join(info.nvkectl.binDir, "nr"), "utf8");
    expect(nr).toContain(`NR_LOCK_DIR:-${join(dir, "nr-lock")}`);
    for (const wrapper of [nr, await readFile(join(info.nvkectl.binDir, "nvkectl"), "utf8")]) {
      expect(wrapper).toContain(`KUBECACHEDIR='${join(dir, "cache", "kube")}'`);
    }
  });

  test("the NodeRings emulator pins the helm the sandbox links, so nr uses it", async () => {
    const token = (await readFile(info.noderings.tokenFile, "utf8")).trim();
    const answer = await fetch(new URL("/api/v1/pins?arch=amd64", info.noderings.url), {
      headers: { authorization: `Bearer ${token}` },
    });
    const pins = (await answer.json()) as { tools: { helm: { version: string } } };
    const helm = await promisify(execFile)(join(info.nvkectl.binDir, "helm"), [
      "version",
      "--template",
      "{{.Version}}",
    ]);
    expect(pins.tools.helm.version).toBe(helm.stdout.trim());
  });
});

describe("sandbox down", () => {
  test("leaves no process, port or file: the supervisor, the registry and its storage, the agent cluster are gone", async () => {
    const supervisor = running.registry?.pid ?? 0;
    const storage = running.registry?.storageDir ?? "";
    expect(supervisor).toBeGreaterThan(0);
    expect(await exists(storage)).toBe(true);
    expect(await listening(info.registry.host)).toBe(true);
    const agent = running.agent?.pids ?? [];
    expect(agent.length).toBe(2);
    await down({ dir, log });
    expect(isAlive(supervisor)).toBe(false);
    expect(agent.some(isAlive)).toBe(false);
    expect(await listening(info.registry.host)).toBe(false);
    expect(await exists(storage)).toBe(false);
    expect(await exists(dir)).toBe(false);
  }, 120_000);
});
