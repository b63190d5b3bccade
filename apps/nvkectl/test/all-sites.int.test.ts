import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createNvkeClient } from "@nodekit/nvke-api";
import type { RunningEmulator } from "@nodekit/nvke-emulator";
import { repoRoot } from "@nodekit/test-utils";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, kubectl } from "./helpers.ts";
import { closedPort, type SiteFixture, setSite, siteFixture } from "./site-fixture.ts";

// `get clusters|nodepools --all-sites` as a user runs it: the built CLI over three sites,
// each an NVKE controller emulator with auth on (TokenReview against the real kube-apiserver):
// "east" with two seeded clusters, "lab" with a cluster created through the API (and so its
// control-plane node pool), and "west", configured but stopped.

const AUDIENCE = "nvke-controller-all-sites";
let site: SiteFixture;
let admin: string;
let home: CliHome;
const emulators: RunningEmulator[] = [];
let westUrl: string;

async function emulator(): Promise<RunningEmulator> {
  const started = await site.emulator({ timing: { provisionMs: 0, deleteMs: 0, nodeMs: 0 } });
  emulators.push(started);
  return started;
}

const example = async (file: string) => load(await readFile(join(repoRoot, "examples", file), "utf8")) as never;

beforeAll(async () => {
  // A control plane of this file's own: the auth ConfigMap's fixed namespace reaches no other file.
  site = await siteFixture("nvkectl-all-sites-", { audience: AUDIENCE });
  ({ admin, home } = site);
  const [east, lab, west] = [await emulator(), await emulator(), await emulator()];
  await east?.seed({ clusters: 2, namePrefix: "east" });
  // lab: a cluster created as a user would (a ServiceAccount token), so it has its control-plane pool.
  const token = (
    await kubectl(admin, ["create", "token", "nke-client", "-n", "nke-clients", "--audience", AUDIENCE])
  ).trim();
  const client = createNvkeClient({ baseUrl: lab?.url ?? "", token: async () => token });
  await client.createMachineImage(await example("machineimage.yaml"));
  await client.createClusterRelease(await example("clusterrelease.yaml"));
  await client.createCluster(await example("capd-cluster.yaml"));
  await lab?.reconcile();
  westUrl = west?.url ?? "";
  await west?.stop();
});

afterAll(async () => {
  await site?.cleanup();
});

describe("--all-sites", () => {
  test("with no site configured: NO_SITES_CONFIGURED, exit 4, nothing on stdout", async () => {
    const result = await home.nvkectl(["get", "clusters", "--all-sites"]);
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("error: --all-sites: no site is configured\n");
    expect(result.stderr).toContain("next: add one: nvkectl config set-site NAME --url URL --kubeconfig FILE\n");
  });

  test("the sites are configured (west's emulator is stopped)", async () => {
    const [east, lab] = emulators;
    for (const [name, url] of [
      ["lab", lab?.url],
      ["west", westUrl],
      ["east", east?.url],
    ] as const) {
      await setSite(home, name, url ?? "", admin);
    }
  });

  test("get clusters -A: every answering site's clusters under SITE; west named on stderr; exit 6", async () => {
    const result = await home.nvkectl(["get", "clusters", "-A"]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SITE\s+NAME\s+ID\s+PROVIDER\s+VERSION\s+PHASE\s+AGE$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 2))).toEqual([
      ["east", "east-0"],
      ["east", "east-1"],
      ["lab", "capd-demo"],
    ]);
    expect(result.stderr).toContain(`error: site "west": `);
    expect(result.stderr).toContain(new URL(westUrl).host);
    expect(result.stderr).toMatch(/error: 1 of 3 sites did not answer: "west"\n/);
    expect(result.stderr).not.toContain('site "east"');
    expect(result.exitCode).toBe(6);
  });

  test("-o json: a List whose items carry site; -l and --sort-by work across sites", async () => {
    const result = await home.nvkectl(["get", "clusters", "-A", "-o", "json"]);
    expect(result.exitCode).toBe(6);
    const list = JSON.parse(result.stdout);
    expect(list).toMatchObject({ apiVersion: "v1", kind: "List" });
    expect(list.items.map((c: { site: string; name: string }) => [c.site, c.name])).toEqual([
      ["east", "east-0"],
      ["east", "east-1"],
      ["lab", "capd-demo"],
    ]);
    expect(list.items[2]).toMatchObject({ site: "lab", provider: "capd", status: { phase: "Ready" } });

    const team = await home.nvkectl([
      "get",
      "clusters",
      "-A",
      "-l",
      "team=platform",
      "--sort-by",
      ".name",
      "-o",
      "name",
    ]);
    expect(team.stdout).toBe("cluster/capd-demo\n");
    const sorted = await home.nvkectl(["get", "clusters", "-A", "--sort-by", ".name", "--no-headers"]);
    expect(
      sorted.stdout
        .trimEnd()
        .split("\n")
        .map((line) => line.split(/\s+/)[1]),
    ).toEqual(["capd-demo", "east-0", "east-1"]);
  });

  test("get nodepools -A: SITE and CLUSTER first, every cluster's pools; --cluster keeps one cluster's", async () => {
    const result = await home.nvkectl(["get", "nodepools", "-A"]);
    expect(result.exitCode).toBe(6);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SITE\s+CLUSTER\s+NAME\s+ID\s+ROLE\s+DESIRED\s+READY\s+PENDING\s+PHASE\s+AGE$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ["lab", "capd-demo", "control-plane"],
    ]);
    expect(result.stderr).toContain(`error: site "west": `);

    const json = await home.nvkectl(["get", "nodepools", "-A", "--cluster", "capd-demo", "-o", "json"]);
    expect(JSON.parse(json.stdout).items).toMatchObject([
      { site: "lab", clusterName: "capd-demo", name: "control-plane" },
    ]);
    // No rows and a site that did not answer: no "No node pools found" (west might have some), its error only.
    const none = await home.nvkectl(["get", "nodepools", "-A", "--cluster", "east-0"]);
    expect(none.stdout).toBe("");
    expect(none.stderr).not.toContain("No node pools found");
    expect(none.stderr).toContain(`error: site "west": `);
    expect(none.exitCode).toBe(6);
  });

  test("--all-sites takes no NAME, --watch or --wait (exit 2); get nodepools without -A still needs --cluster", async () => {
    const named = await home.nvkectl(["get", "clusters", "capd-demo", "-A"]);
    expect(named.exitCode).toBe(2);
    expect(named.stderr).toContain("a cluster cannot be shown by NAME across sites");
    expect((await home.nvkectl(["get", "clusters", "-A", "-w"])).exitCode).toBe(2);
    expect((await home.nvkectl(["get", "nodepools", "-A", "--wait"])).exitCode).toBe(2);
    const pools = await home.nvkectl(["get", "nodepools"]);
    expect(pools.exitCode).toBe(2);
    expect(pools.stderr).toContain("error: missing required flag --cluster\n");
  });

  test("once every site answers: exit 0, nothing on stderr", async () => {
    const removed = await home.nvkectl(["config", "delete-site", "west"]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    const result = await home.nvkectl(["get", "clusters", "-A", "--no-headers"]);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trimEnd().split("\n")).toHaveLength(3);
    const none = await home.nvkectl(["get", "nodepools", "-A", "--cluster", "east-0"]);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain('No node pools found in a cluster "east-0" on any site.\n');
    expect(none.exitCode).toBe(0);
  });
});

describe("get providers --all-sites", () => {
  test("each site's cluster read with its kubeconfig, SITE first; a cluster that does not answer is named (exit 6)", async () => {
    // "dark": a site whose kubeconfig names a kube-apiserver nothing listens on.
    const dark = join(home.path, "dark.kubeconfig");
    const server = `https://127.0.0.1:${await closedPort()}`;
    await writeFile(
      dark,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "dark", cluster: { server, "insecure-skip-tls-verify": true } }],
        users: [{ name: "dark", user: { token: "not-a-secret-dark-site-token" } }],
        contexts: [{ name: "dark", context: { cluster: "dark", user: "dark" } }],
        "current-context": "dark",
      }),
    );
    await setSite(home, "dark", westUrl, dark);

    const result = await home.nvkectl(["get", "providers", "--all-sites", "--request-timeout", "10s"]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SITE\s+NAME\s+STATE\s+CREDENTIALS\s+LAST CHECK$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ["east", "nico", "NOT-INSTALLED"],
      ["east", "capd", "NOT-INSTALLED"],
      ["lab", "nico", "NOT-INSTALLED"],
      ["lab", "capd", "NOT-INSTALLED"],
    ]);
    expect(result.stderr).toContain('error: site "dark": ');
    expect(result.stderr).toContain('error: 1 of 3 sites did not answer: "dark"\n');
    expect(result.stderr).not.toContain("not-a-secret-dark-site-token");
    expect(result.exitCode).toBe(6);

    const json = await home.nvkectl(["get", "providers", "capd", "-A", "-o", "json"]);
    expect(JSON.parse(json.stdout).items.map((p: { site: string; name: string }) => [p.site, p.name])).toEqual([
      ["east", "capd"],
      ["lab", "capd"],
    ]);
    expect((await home.nvkectl(["get", "providers", "-A", "--context", "dark"])).exitCode).toBe(2);
  });
});
