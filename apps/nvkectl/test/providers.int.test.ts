import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { eventually } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apply, type CliHome, cliHome, kubectl, NO_KUBECTL } from "./helpers.ts";

// get providers against a real kube-apiserver: the provider objects are applied with
// kubectl, and status (which no controller runs here to write) is patched through the
// status subresource, as the provider's controller would. nvkectl itself runs with no
// kubectl on PATH: get providers reads through the client library. Right after a CRD is
// Established the API server may answer its objects' list 429 "storage is (re)initializing"
// with Retry-After, which the reads ask again (packages/kube/src/transport.test.ts asks a
// stand-in for that answer every time).

const GROUP = "infrastructure.cluster.x-k8s.io";

function crd(plural: string, kind: string, extra: { shortNames?: string[]; schema?: object } = {}): object {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        plural,
        singular: kind.toLowerCase(),
        kind,
        listKind: `${kind}List`,
        ...(extra.shortNames ? { shortNames: extra.shortNames } : {}),
      },
      versions: [
        {
          name: "v1beta1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: extra.schema ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
        },
      ],
    },
  };
}

/** NicoIdentity as docs/providers.md describes it. */
const nicoIdentitySchema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        secretRef: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, namespace: { type: "string" } },
        },
      },
    },
    status: {
      type: "object",
      properties: {
        credentials: {
          type: "object",
          properties: {
            state: { type: "string" },
            lastCheckTime: { type: "string", format: "date-time" },
            message: { type: "string" },
          },
        },
      },
    },
  },
};

const NICO_CRDS = [
  crd("nicoclusters", "NicoCluster"),
  crd("nicomachines", "NicoMachine"),
  crd("nicomachinetemplates", "NicoMachineTemplate"),
  crd("nicoidentities", "NicoIdentity", { schema: nicoIdentitySchema }),
];
const CAPD_CRDS = [
  crd("dockerclusters", "DockerCluster"),
  crd("dockerclustertemplates", "DockerClusterTemplate"),
  crd("dockermachines", "DockerMachine"),
  crd("dockermachinetemplates", "DockerMachineTemplate"),
];
/** Claims NicoMachine's singular name first, so that nicomachines' names are not accepted and it never becomes Established. */
const DECOY = crd("decoys", "Decoy", { shortNames: ["nicomachine"] });

const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
const deployment = (ns: string, name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { namespace: ns, name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "manager", image: "registry.invalid/manager:1.0" }] },
    },
  },
});

let admin: string;
let home: CliHome;

async function providers(): Promise<
  Record<string, { state: string; credentials: string; lastCheckTime?: string; reason: string; identity?: string }>
> {
  const result = await home.nvkectl(["get", "providers", "-o", "json"]);
  expect(result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  const list = JSON.parse(result.stdout).items as Array<{
    name: string;
    state: string;
    credentials: string;
    reason: string;
  }>;
  return Object.fromEntries(list.map((p) => [p.name, p]));
}

/** What get providers says of nico now matches `expected`. */
async function expectNico(expected: Record<string, string>): Promise<void> {
  expect((await providers()).nico).toMatchObject(expected);
}

async function establishedAll(names: string[]): Promise<void> {
  await eventually(async () => {
    for (const name of names) {
      const status = await kubectl(admin, [
        "get",
        "crd",
        `${name}.${GROUP}`,
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Established")].status}',
      ]);
      if (status !== "True") throw new Error(`${name} not Established yet`);
    }
  }, 20_000);
}

beforeAll(async () => {
  // A control plane of this file's own: the provider CRDs and namespaces it makes reach no
  // other file, and no other file's Cluster API install is on it.
  const plane = await useControlPlane({ dedicated: true });
  admin = plane.adminKubeconfigPath;
  home = await cliHome("nvkectl-providers-", { env: { PATH: NO_KUBECTL } });
  // No controller URL is needed: get providers reads the site cluster only.
  const set = await home.nvkectl(["config", "set-site", "lab", "--url", "http://127.0.0.1:9", "--kubeconfig", admin]);
  expect(set.exitCode).toBe(0);
});

afterAll(async () => {
  await home?.cleanup();
});

describe("nvkectl get providers (real kube-apiserver)", () => {
  test("walks nico from not installed to CONFIGURED with HEALTHY credentials, each state in turn", async () => {
    // Given a site cluster with no provider at all
    let seen = await providers();
    expect(seen.nico).toMatchObject({ state: "NOT-INSTALLED", credentials: "NO-IDENTITY" });
    expect(seen.capd).toMatchObject({ state: "NOT-INSTALLED", credentials: "UNSUPPORTED" });

    // When a CRD that claims one of nico's names comes first, and then only some of nico's CRDs
    await apply(admin, DECOY);
    await establishedAll(["decoys"]);
    await apply(admin, ...NICO_CRDS.slice(1, 3));
    // Then nico is partly installed: CRDs missing, which is not "not installed"
    seen = await providers();
    expect(seen.nico?.state).toBe("CRDS-MISSING");
    expect(seen.nico?.reason).toContain(`nicoclusters.${GROUP}`);

    // When the rest arrive, nicomachines' names are still refused (the decoy holds "nicomachine")
    await apply(admin, ...NICO_CRDS);
    await establishedAll(["nicoclusters", "nicomachinetemplates", "nicoidentities"]);
    seen = await providers();
    expect(seen.nico?.state).toBe("CRDS-NOT-ESTABLISHED");
    expect(seen.nico?.reason).toBe(`CRD nicomachines.${GROUP} not Established`);

    // When the conflict goes, every CRD is Established, and the controller is the first thing missing
    await kubectl(admin, ["delete", "crd", `decoys.${GROUP}`, "--wait=true"]);
    await establishedAll(["nicomachines"]);
    await expectNico({ state: "NO-CONTROLLER", reason: "Deployment nico-system/nico-controller-manager not found" });

    // When the Deployment exists but is not Available (no controller-manager runs here)
    await apply(admin, namespace("nico-system"));
    await apply(admin, deployment("nico-system", "nico-controller-manager"));
    await expectNico({
      state: "CONTROLLER-UNAVAILABLE",
      reason: "Deployment nico-system/nico-controller-manager not Available (0/1 ready)",
    });

    // When it reports Available (its status, as the Deployment controller would write it)
    await kubectl(admin, [
      "patch",
      "deployment",
      "nico-controller-manager",
      "-n",
      "nico-system",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          replicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
          conditions: [
            {
              type: "Available",
              status: "True",
              reason: "MinimumReplicasAvailable",
              message: "Deployment has minimum availability.",
              lastTransitionTime: new Date().toISOString(),
              lastUpdateTime: new Date().toISOString(),
            },
          ],
        },
      }),
    ]);
    // Then the credentials Secret is what is missing: misconfigured, not uninstalled
    await expectNico({ state: "NO-CREDENTIALS", reason: "Secret nico-system/nico-credentials not found" });

    // When the Secret exists
    await kubectl(admin, [
      "create",
      "secret",
      "generic",
      "nico-credentials",
      "-n",
      "nico-system",
      "--from-literal=apiKey=not-a-real-key",
    ]);
    // Then nico is CONFIGURED, but nothing checks the credentials yet
    await expectNico({ state: "CONFIGURED", reason: "", credentials: "NO-IDENTITY" });

    // When a NicoIdentity names another Secret, it is not the one
    const identity = (name: string, secretName: string) => ({
      apiVersion: `${GROUP}/v1beta1`,
      kind: "NicoIdentity",
      metadata: { namespace: "nico-system", name },
      spec: { secretRef: { name: secretName } },
    });
    await apply(admin, identity("other", "some-other-secret"));
    expect((await providers()).nico?.credentials).toBe("NO-IDENTITY");

    // When one names nico's Secret but has not checked it yet
    await apply(admin, identity("default", "nico-credentials"));
    await expectNico({ credentials: "UNKNOWN", identity: "nico-system/default" });

    // When the provider records a successful check half an hour ago
    const checkedAt = new Date(Date.now() - 30 * 60_000).toISOString().replace(/\.\d+Z$/, "Z");
    const setCheck = (state: string, message: string) =>
      kubectl(admin, [
        "patch",
        "nicoidentities.infrastructure.cluster.x-k8s.io",
        "default",
        "-n",
        "nico-system",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: { credentials: { state, lastCheckTime: checkedAt, message } } }),
      ]);
    await setCheck("HEALTHY", "authenticated as org nvke-lab");
    await expectNico({ state: "CONFIGURED", credentials: "HEALTHY", lastCheckTime: checkedAt });

    // Then the table reads CONFIGURED with HEALTHY, checked 30m ago
    const table = await home.nvkectl(["get", "providers"]);
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/^NAME\s+STATE\s+CREDENTIALS\s+LAST CHECK\n/);
    expect(table.stdout).toMatch(/\nnico\s+CONFIGURED\s+HEALTHY\s+30m\n/);

    // When the provider finds the credentials expired
    await setCheck("EXPIRED", "the API key expired on 2026-01-01");
    const wide = await home.nvkectl(["get", "providers", "-o", "wide"]);
    expect(wide.stdout).toMatch(
      /\nnico\s+CONFIGURED\s+EXPIRED\s+30m\s+<none>\s+nico-system\/nico-controller-manager\s+nico-system\/nico-credentials\s+nico-system\/default\n/,
    );

    // And it never printed the Secret's content
    expect(wide.stdout + wide.stderr).not.toContain("not-a-real-key");
  });

  test("capd needs no credentials: CONFIGURED with UNSUPPORTED once its CRDs and controller are there", async () => {
    await apply(admin, ...CAPD_CRDS);
    await establishedAll(["dockerclusters", "dockerclustertemplates", "dockermachines", "dockermachinetemplates"]);
    await apply(admin, namespace("capd-system"));
    await apply(admin, deployment("capd-system", "capd-controller-manager"));
    expect((await providers()).capd).toMatchObject({ state: "CONTROLLER-UNAVAILABLE", credentials: "UNSUPPORTED" });

    await kubectl(admin, [
      "patch",
      "deployment",
      "capd-controller-manager",
      "-n",
      "capd-system",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: { replicas: 1, readyReplicas: 1, conditions: [{ type: "Available", status: "True" }] },
      }),
    ]);
    const seen = await providers();
    expect(seen.capd).toMatchObject({ state: "CONFIGURED", credentials: "UNSUPPORTED" });
    expect(seen.capd?.lastCheckTime).toBeUndefined();
  });

  test("get providers NAME shows the ones named, and -o name prints provider/NAME", async () => {
    const one = await home.nvkectl(["get", "providers", "capd", "--no-headers"]);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^capd\s+CONFIGURED\s+UNSUPPORTED\s+<none>\n$/);
    const names = await home.nvkectl(["get", "providers", "capd", "nico", "-o", "name"]);
    expect(names.stdout).toBe("provider/capd\nprovider/nico\n");
  });

  test("--request-timeout is taken (no kubectl runs: the reads go through the client library), and 0 is refused", async () => {
    const given = await home.nvkectl(["get", "providers", "capd", "--request-timeout", "2m", "-v"]);
    expect(given.exitCode, given.stderr).toBe(0);
    expect(given.stderr).not.toContain("running kubectl");
    const zero = await home.nvkectl(["get", "providers", "--request-timeout", "0"]);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain("--request-timeout must be longer than 0");
  });

  test("an identity without RBAC to read the site cluster gets exit 7 and the API server's own message", async () => {
    const plane = await useControlPlane({ dedicated: true });
    const nobody = await plane.kubeconfigFor({ user: "nvkectl-nobody" });
    const other = await cliHome("nvkectl-providers-nobody-", { env: { PATH: NO_KUBECTL } });
    try {
      await other.nvkectl(["config", "set-site", "lab", "--url", "http://127.0.0.1:9", "--kubeconfig", nobody]);
      const result = await other.nvkectl(["get", "providers"]);
      expect(result.exitCode).toBe(7);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("error: the site cluster refused reading the providers' CRDs:");
      expect(result.stderr).toContain('User "nvkectl-nobody" cannot get resource "customresourcedefinitions"');
    } finally {
      await other.cleanup();
    }
  });

  test("a site cluster that does not answer gets exit 6", async () => {
    const other = await cliHome("nvkectl-providers-down-", { env: { PATH: NO_KUBECTL } });
    try {
      const kubeconfig = join(other.path, "down.kubeconfig");
      await writeFile(
        kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: down\n  cluster:\n    server: https://127.0.0.1:9\n    insecure-skip-tls-verify: true\ncontexts:\n- name: down\n  context: {cluster: down, user: u}\ncurrent-context: down\nusers:\n- name: u\n  user: {token: x}\n",
      );
      await other.nvkectl(["config", "set-site", "down", "--url", "http://127.0.0.1:9", "--kubeconfig", kubeconfig]);
      const result = await other.nvkectl(["get", "providers"]);
      // Port 9: fetch refuses it as unsafe ("bad port", exit 1 once); kubectl is refused there, as is nvkectl.
      expect(result.exitCode, result.stderr).toBe(6);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("error: cannot reach the site cluster at https://127.0.0.1:9");
      expect(result.stderr).toContain("ECONNREFUSED");
      // The same code as nvkectl version's when the site does not answer.
      const logged = await other.nvkectl(["get", "providers", "--json-logs"]);
      expect(logged.exitCode).toBe(6);
      expect(JSON.parse(logged.stderr.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
        level: "error",
        code: "KUBE_UNREACHABLE",
        exitCode: 6,
      });
    } finally {
      await other.cleanup();
    }
  });
});
