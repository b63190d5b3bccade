import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsSafeErrorCodes } from "@nodekit/fs-safe";
import { formatPlan, planCallLines } from "@nodekit/plan";
import { createRecordingRunner, Redactor } from "@nodekit/process";
import { otherUser } from "@nodekit/test-utils";
import { load } from "js-yaml";
import { afterEach, describe, expect, test } from "vitest";
import { shippedContext } from "../../test/shipped-context.ts";
import { planInstall, runInstall } from "./install.ts";

test("the shipped deploy path parses, validates and dry-runs in the order the seed gives", async () => {
  const plan = planInstall(await shippedContext());
  expect(plan.items.map((item) => item.id)).toEqual([
    "cluster-api",
    "storage-class",
    "node-architecture",
    "nico-credentials",
    "spire-crds",
    "spire",
    "nvke-controller",
    "nvke-config",
    "spire-patch",
    "client-networks",
    "prune",
  ]);
  const text = formatPlan(plan);
  expect(text).not.toContain("k3y-not-printed");
  const lines = planCallLines(plan);
  expect(lines[0]).toBe(
    "HOME=/srv/state/home XDG_CONFIG_HOME=/srv/state/home/.config XDG_CACHE_HOME=/srv/state/home/.cache XDG_DATA_HOME=/srv/state/home/.local/share CLUSTERCTL_DISABLE_VERSIONCHECK=true clusterctl init --config /srv/state/clusterctl.yaml --core cluster-api:v1.11.7 --bootstrap kubeadm:v1.11.7 --control-plane kubeadm:v1.11.7 --infrastructure nico:v0.3.0 --wait-providers --wait-provider-timeout 600 --kubeconfig /srv/my-tier0-site.kubeconfig",
  );
  expect(
    lines.some((line) =>
      line.includes(
        "helm upgrade --install spire spire --repo https://spiffe.github.io/helm-charts-hardened --version 0.24.1",
      ),
    ),
  ).toBe(true);
  const config = plan.items[0]?.steps[0];
  expect(config?.kind === "action" && String(config.params?.content)).not.toMatch(/github|https?:/);
});

test("providers already installed at the pins are not installed again; another version is refused", async () => {
  const installed = {
    "CoreProvider/cluster-api": "v1.11.7",
    "BootstrapProvider/kubeadm": "v1.11.7",
    "ControlPlaneProvider/kubeadm": "v1.11.7",
  };
  const plan = planInstall(await shippedContext(installed));
  expect(planCallLines(plan)[0]).toContain(
    "clusterctl init --config /srv/state/clusterctl.yaml --infrastructure nico:v0.3.0 --wait",
  );
  const older = await shippedContext({ ...installed, "CoreProvider/cluster-api": "v1.10.0" });
  expect(() => planInstall(older)).toThrow(
    "Cluster API provider cluster-api (CoreProvider) is installed at v1.10.0; the deploy path pins v1.11.7",
  );
});

// Issue 9, item 1: the install renders files into its work dir, then applies them with the
// site's admin kubeconfig; a planted link or a work dir others can write must stop it first.
describe("the install's work dir and rendered files", () => {
  const every = {
    "CoreProvider/cluster-api": "v1.11.7",
    "BootstrapProvider/kubeadm": "v1.11.7",
    "ControlPlaneProvider/kubeadm": "v1.11.7",
    "InfrastructureProvider/nico": "v0.3.0",
  };
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function attempt(prepare: (workDir: string) => Promise<void>) {
    dir = await mkdtemp(join(tmpdir(), "install-work-"));
    const workDir = join(dir, "state");
    await prepare(workDir);
    const context = { ...(await shippedContext(every)), workDir };
    const runner = createRecordingRunner();
    const failure = await runInstall(context, planInstall(context), { runner, redactor: new Redactor() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    return { failure, calls: runner.calls, workDir };
  }

  test("a helm registry config a killed run left (kill -9: no exit hook) is removed when the next run starts", async () => {
    const { workDir } = await attempt(async (workDir) => {
      await mkdir(join(workDir, "helm-registry"), { recursive: true, mode: 0o700 });
      await writeFile(join(workDir, "helm-registry", "config.json"), '{"auths":{"r":{"auth":"b3BzOnB3"}}}', {
        mode: 0o600,
      });
    });
    await expect(stat(join(workDir, "helm-registry"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("a link planted in place of a rendered file is refused; what it points to is untouched and nothing is applied", async () => {
    const { failure, calls } = await attempt(async (workDir) => {
      await writeFile(join(dir ?? "", "victim"), "precious\n");
      await mkdir(workDir, { mode: 0o700 });
      await symlink(join(dir ?? "", "victim"), join(workDir, "storage-class.yaml"));
    });
    expect(failure).toMatchObject({ code: fsSafeErrorCodes.FILE_IS_SYMLINK.code });
    expect(await readFile(join(dir ?? "", "victim"), "utf8")).toBe("precious\n");
    expect(calls).toEqual([]);
  });

  test("a work dir every user may write to is refused before anything is written or applied", async () => {
    const { failure, calls, workDir } = await attempt(async (workDir) => {
      await mkdir(workDir);
      await chmod(workDir, 0o777);
    });
    expect(failure).toMatchObject({ code: fsSafeErrorCodes.DIR_UNSAFE.code });
    await expect(readFile(join(workDir, "storage-class.yaml"), "utf8")).rejects.toThrow("ENOENT");
    expect(calls).toEqual([]);
  });

  const other = otherUser();
  test.skipIf(other.skip !== undefined)(
    `a rendered file another user made is not replaced (${other.skip ?? "as root, against a second user"})`,
    async () => {
      const { failure, calls } = await attempt(async (workDir) => {
        await mkdir(workDir, { mode: 0o700 });
        await writeFile(join(workDir, "storage-class.yaml"), "theirs\n");
        await chown(join(workDir, "storage-class.yaml"), other.user?.uid ?? 0, other.user?.gid ?? 0);
      });
      expect(failure).toMatchObject({ code: fsSafeErrorCodes.FILE_OWNED_BY_OTHER.code });
      expect(calls).toEqual([]);
    },
  );

  test("a fresh work dir is made private and the rendered file is 0600", async () => {
    const { workDir, calls } = await attempt(async () => {});
    expect((await stat(workDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(workDir, "storage-class.yaml"))).mode & 0o777).toBe(0o600);
    expect(calls.length).toBeGreaterThan(0);
  });
});

// Issue 26 §1 item 7: controllerApi.port and podSelector reach the chart as well as the
// NetworkPolicy, so the two cannot select different pods or ports.
test("the controller API's port and pod labels go to the chart and to the NetworkPolicy alike", async () => {
  const context = await shippedContext();
  const plan = planInstall({
    ...context,
    stack: {
      ...context.stack,
      controllerApi: { port: 9443, podSelector: { "app.kubernetes.io/name": "nvke-controller", tier: "api" } },
    },
  });
  const written = (item: string, file: string) => {
    const step = plan.items
      .find((candidate) => candidate.id === item)
      ?.steps.find((s) => s.kind === "action" && String(s.params?.path).endsWith(file));
    return step?.kind === "action" ? (load(String(step.params?.content)) as Record<string, unknown>) : undefined;
  };
  expect(written("nvke-controller", "stack-values.yaml")).toMatchObject({
    service: { port: 9443 },
    podLabels: { "app.kubernetes.io/name": "nvke-controller", tier: "api" },
  });
  expect(written("client-networks", "client-networks.yaml")).toMatchObject({
    metadata: { namespace: "nke-controller" },
    spec: {
      podSelector: { matchLabels: { "app.kubernetes.io/name": "nvke-controller", tier: "api" } },
      ingress: [{ ports: [{ protocol: "TCP", port: 9443 }] }],
    },
  });
});
