import { execFile } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RunningEmulator } from "@nodekit/nvke-emulator";
import { eventually, repoRoot } from "@nodekit/test-utils";
import { load, loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apply, type CliHome, cliHome, kubectl, moduleLoadRecorder } from "./helpers.ts";
import { authConfigMap, closedPort, type SiteFixture, setSite, siteFixture } from "./site-fixture.ts";

// The cluster and node pool commands as a user runs them: the built CLI against the NVKE
// controller emulator, which authenticates every request with a TokenReview against the
// real kube-apiserver (auth on), and writes tenant kubeconfig Secrets there.

const execFileAsync = promisify(execFile);
const AUDIENCE = "nvke-controller-test";

let site: SiteFixture;
let admin: string;
let emulator: RunningEmulator;
let home: CliHome;
/** One line per HTTP request the emulator answered: "GET /api/v1/clusters?name=x 200 3ms user=…". */
const requests: string[] = [];
const apiRequests = () => requests.filter((line) => /^(GET|POST|PATCH|DELETE) \/api\//.test(line));
const example = (name: string) => join(repoRoot, "examples", name);

/** Requests made while `fn` ran. */
async function counting<T>(fn: () => Promise<T>): Promise<{ result: T; made: string[] }> {
  const before = apiRequests().length;
  const result = await fn();
  return { result, made: apiRequests().slice(before) };
}

async function clusterJson(name: string): Promise<Record<string, unknown> & { id: string; status: { phase: string } }> {
  const result = await home.nvkectl(["get", "clusters", name, "-o", "json"]);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

beforeAll(async () => {
  // Auth on: the auth ConfigMap, and the ServiceAccount tokens are minted for.
  site = await siteFixture("nvkectl-clusters-", { audience: AUDIENCE });
  ({ admin, home } = site);
  emulator = await site.emulator({
    timing: { provisionMs: 2500, deleteMs: 800, nodeMs: 200 },
    // Seed step 14: with the control-plane controller off, the last joined control-plane pool cannot be deleted.
    controlPlaneController: false,
    authConfigTtlMs: 0,
    log: (line) => requests.push(line),
  });
  await setSite(home, "lab", emulator.url, admin);
});

afterAll(async () => {
  await site?.cleanup();
});

describe("a tenant cluster's life, command by command", () => {
  let clusterId: string;

  test("create publishes the MachineImage, ClusterRelease and NodePoolRelease of examples/", async () => {
    for (const [kind, file, name] of [
      ["machineimage", "machineimage.yaml", "ubuntu-2404-k8s-1-31"],
      ["clusterrelease", "clusterrelease.yaml", "nvke-1-31"],
      ["nodepoolrelease", "nodepoolrelease.yaml", "nvke-workers-1-31"],
    ] as const) {
      const result = await home.nvkectl(["create", kind, "-f", example(file)]);
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^${kind} "${name}" created: ID [0-9a-f-]{36}, version `));
    }
    const images = await home.nvkectl(["get", "machineimages"]);
    expect(images.stdout).toMatch(
      /^NAME\s+VERSION\s+KUBERNETES\s+OS\s+ARCH\s+AGE\nubuntu-2404-k8s-1-31\s+1\.0\.0\s+v1\.31\.4\s+ubuntu 24\.04\s+amd64\s+\d+s\n$/,
    );
    const releases = await home.nvkectl(["get", "clusterrelease", "nvke-1-31", "-o", "json"]);
    expect(JSON.parse(releases.stdout).items).toMatchObject([
      { name: "nvke-1-31", machineImageName: "ubuntu-2404-k8s-1-31" },
    ]);
    const missing = await home.nvkectl(["get", "nodepoolreleases", "nope"]);
    expect(missing.exitCode).toBe(4);
  });

  test("get of a release kind: -o name, -l, --sort-by, --no-headers; a name not there is named after the others (exit 4)", async () => {
    const named = await home.nvkectl(["get", "machineimages", "ubuntu-2404-k8s-1-31", "nope", "-o", "name"]);
    expect(named.exitCode).toBe(4);
    expect(named.stdout).toBe("machineimage/ubuntu-2404-k8s-1-31\n");
    expect(named.stderr).toContain('error: MachineImage "nope" not found\n');
    expect(named.stderr).toContain("next: list them with: nvkectl get machineimages\n");
    const twoMissing = await home.nvkectl(["get", "clusterreleases", "nope", "nvke-1-31", "gone"]);
    expect(twoMissing.exitCode).toBe(4);
    expect(twoMissing.stdout).toMatch(/^NAME\s.*\nnvke-1-31\s.*\n$/);
    expect(twoMissing.stderr).toContain('error: ClusterReleases "nope" and "gone" not found\n');
    expect(twoMissing.stderr).toContain("next: list them with: nvkectl get clusterreleases\n");

    const stable = await home.nvkectl(["get", "machineimages", "-l", "nvke.nvidia.com/channel=stable", "-o", "name"]);
    expect(stable.exitCode, stable.stderr).toBe(0);
    expect(stable.stdout).toBe("machineimage/ubuntu-2404-k8s-1-31\n");
    const none = await home.nvkectl(["get", "clusterreleases", "-l", "nvke.nvidia.com/channel=beta"]);
    expect(none.exitCode, none.stderr).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toBe("No resources found.\n");

    const bare = await home.nvkectl(["get", "nodepoolreleases", "--no-headers", "--sort-by", ".name", "-o", "wide"]);
    expect(bare.exitCode, bare.stderr).toBe(0);
    expect(bare.stdout).toMatch(
      /^nvke-workers-1-31\s+\S+\s+v1\.31\.4\s+ubuntu-2404-k8s-1-31\s+\d+s\s+[0-9a-f-]{36}\s+nvke-1-31\s+\d+\n$/,
    );
  });

  test("create of a release kind: -o name and -o yaml print the object; a name taken exits 5, naming it", async () => {
    const pool = (await readFile(example("nodepoolrelease.yaml"), "utf8")).replace(
      "name: nvke-workers-1-31",
      "name: nvke-workers-1-31-b",
    );
    const named = await home.nvkectl(["create", "nodepoolrelease", "-f", "-", "-o", "name"], { input: pool });
    expect(named.exitCode, named.stderr).toBe(0);
    expect(named.stdout).toBe("nodepoolrelease/nvke-workers-1-31-b\n");
    const release = (await readFile(example("clusterrelease.yaml"), "utf8")).replace(
      "name: nvke-1-31",
      "name: nvke-1-31-b",
    );
    const printed = await home.nvkectl(["create", "clusterrelease", "-f", "-", "-o", "yaml"], { input: release });
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^id: [0-9a-f-]{36}\n/m);
    expect(printed.stdout).toMatch(/^name: nvke-1-31-b\n/m);

    const taken = await home.nvkectl(["create", "machineimage", "-f", example("machineimage.yaml")]);
    expect(taken.exitCode).toBe(5);
    expect(taken.stdout).toBe("");
    expect(taken.stderr).toContain('machine image "ubuntu-2404-k8s-1-31" already exists');
  });

  test("create cluster -f prints the new cluster's name, ID and phase", async () => {
    const result = await home.nvkectl(["create", "cluster", "-f", example("capd-cluster.yaml")]);
    expect(result.exitCode, result.stderr).toBe(0);
    const match = /^cluster "capd-demo" created: ID ([0-9a-f-]{36}), phase Provisioning\n$/.exec(result.stdout);
    expect(match).not.toBeNull();
    clusterId = match?.[1] ?? "";
    expect(result.stderr).toBe("watch it come up with: nvkectl get clusters capd-demo --watch\n");
  });

  test("get cluster -w (an alias) prints each phase until Ready, then returns", async () => {
    const result = await home.nvkectl(["get", "cluster", "capd-demo", "-w", "--poll-interval", "200ms"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+ID\s+PROVIDER\s+VERSION\s+PHASE\s+AGE$/);
    expect(lines[1]).toMatch(new RegExp(`^capd-demo\\s+${clusterId}\\s+capd\\s+v1\\.31\\.4\\s+Provisioning\\s+\\d+s$`));
    expect(lines.at(-1)).toMatch(/\sReady\s+\d+s$/);
  });

  test("get clusters NAME reports the ID; the list, -o json and -o yaml parse", async () => {
    const one = await clusterJson("capd-demo");
    expect(one).toMatchObject({ id: clusterId, name: "capd-demo", status: { phase: "Ready" } });

    const table = await home.nvkectl(["get", "clusters", "capd-demo"]);
    expect(table.stdout).toMatch(
      new RegExp(`\\ncapd-demo\\s+${clusterId}\\s+capd\\s+v1\\.31\\.4\\s+Ready\\s+\\d+s\\n$`),
    );
    const wide = await home.nvkectl(["get", "clusters", "-o", "wide"]);
    expect(wide.stdout).toMatch(
      /^NAME\s+ID\s+PROVIDER\s+VERSION\s+PHASE\s+AGE\s+RELEASE\s+CONTROL PLANE\s+ENDPOINT\s+MESSAGE\n/,
    );
    expect(wide.stdout).toContain("nvke-1-31");

    const list = JSON.parse((await home.nvkectl(["get", "clusters", "-o", "json"])).stdout);
    expect(list).toMatchObject({ apiVersion: "v1", kind: "List", metadata: { resourceVersion: "" } });
    expect(list.items).toEqual([expect.objectContaining({ id: clusterId, name: "capd-demo" })]);
    const yaml = load((await home.nvkectl(["get", "clusters", "-o", "yaml"])).stdout);
    expect(yaml).toEqual(list);
  });

  test("get kubeconfig reads the tenant kubeconfig Secret from the site cluster: stdout, or a 0600 file", async () => {
    const printed = await home.nvkectl(["get", "kubeconfig", "capd-demo"]);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(load(printed.stdout)).toMatchObject({ apiVersion: "v1", kind: "Config" });

    const file = join(home.path, "capd-demo.kubeconfig");
    const written = await home.nvkectl(["get", "kubeconfig", "capd-demo", "--output-file", file]);
    expect(written.exitCode).toBe(0);
    expect(written.stdout).toBe("");
    expect(await readFile(file, "utf8")).toBe(printed.stdout);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  test("completion: bash's TAB offers the site's cluster names, the output formats and the sites, as kubectl's does", async () => {
    // The script nvkectl completion bash prints, run by bash as a TAB runs it, with this built nvkectl on PATH.
    const bin = join(home.path, "bin");
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, "nvkectl"),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, "apps/nvkectl/bin/run.js"))} "$@"\n`,
      { mode: 0o755 },
    );
    const script = await home.nvkectl(["completion", "bash"]);
    expect(script.exitCode, script.stderr).toBe(0);
    await writeFile(join(home.path, "completion.bash"), script.stdout);
    const tab = async (...words: string[]) => {
      const { stdout } = await execFileAsync(
        "bash",
        [
          "-c",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash script, run by bash
          'source "$1"; shift; COMP_WORDS=(nvkectl "$@"); COMP_CWORD=$#; _nvkectl_complete; printf "%s\\n" "${COMPREPLY[@]}"',
          "tab",
          join(home.path, "completion.bash"),
          ...words,
        ],
        { env: { ...home.env, PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" } },
      );
      return stdout.split("\n").filter(Boolean);
    };
    expect(await tab("get", "clusters", "")).toEqual(["capd-demo"]);
    expect(await tab("get", "kubeconfig", "capd")).toEqual(["capd-demo"]);
    expect(await tab("get", "clusters", "-o", "")).toEqual(["json", "jsonpath=", "name", "table", "wide", "yaml"]);
    expect(await tab("get", "nodepools", "--cluster", "")).toEqual(["capd-demo"]);
    expect(await tab("config", "use-site", "")).toEqual(["lab"]);
    expect(await tab("get", "clu")).toEqual(["cluster", "clusterrelease", "clusterreleases", "clusters"]);
    // A site that does not answer offers no names, and says nothing.
    expect(await tab("get", "clusters", "--site", "nope", "")).toEqual([]);
  });

  test("patch cluster changes only the fields in the patch, and null clears a field", async () => {
    const before = await clusterJson("capd-demo");
    expect(before).toMatchObject({
      description: "Lab tenant cluster on CAPD",
      labels: { team: "platform", environment: "lab" },
    });

    const result = await home.nvkectl([
      "patch",
      "clusters",
      "capd-demo",
      "--patch",
      '{"description": null, "labels": {"team": null, "owner": "sre"}}',
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe('cluster "capd-demo" patched\n');

    const after = await clusterJson("capd-demo");
    expect(after.description).toBeUndefined();
    expect(after.labels).toEqual({ environment: "lab", owner: "sre" });
    const { description: _d, labels: _l, updatedAt: _u, ...unchanged } = before;
    const { labels: _l2, updatedAt: _u2, ...afterRest } = after;
    expect(afterRest).toEqual(unchanged);

    // From a YAML file, too
    const file = join(home.path, "patch.yaml");
    await writeFile(file, "description: patched from a file\n");
    expect((await home.nvkectl(["patch", "cluster", "capd-demo", "--patch-file", file])).exitCode).toBe(0);
    expect((await clusterJson("capd-demo")).description).toBe("patched from a file");
  });

  test("patch refuses an immutable field and invalid JSON before sending anything", async () => {
    const { result, made } = await counting(() =>
      home.nvkectl([
        "patch",
        "cluster",
        "capd-demo",
        "--patch",
        '{"network": {"podCIDR": "10.0.0.0/8"}, "description": 5}',
      ]),
    );
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("error: --patch has 2 problems; nothing was sent to the controller");
    expect(result.stderr).toContain("--patch: field network: cannot be changed once the cluster exists");
    expect(result.stderr).toContain("--patch: field description: 5 must be a string, not a number");
    expect(made).toEqual([]);

    const broken = await home.nvkectl(["patch", "cluster", "capd-demo", "--patch", '{"description": ']);
    expect(broken.exitCode).toBe(3);
    expect(broken.stderr).toContain("--patch:1: column 17: is not valid YAML or JSON: ");
  });

  describe("node pools", () => {
    let poolFile: string;

    test("create nodepool -f takes one document; a file with two is refused, naming the count", async () => {
      const text = `${await readFile(example("nico-mock-nodepool.yaml"), "utf8")}clusterID: ${clusterId}\n`;
      poolFile = join(home.path, "workers.yaml");
      await writeFile(poolFile, text);
      const twoDocs = join(home.path, "two-pools.yaml");
      await writeFile(twoDocs, `${text}\n---\n${text.replace("name: workers", "name: workers-2")}`);

      const refused = await counting(() => home.nvkectl(["create", "nodepool", "-f", twoDocs]));
      expect(refused.result.exitCode).toBe(3);
      expect(refused.result.stderr).toContain(
        `error: ${twoDocs} holds 2 documents; it must hold exactly one CreateNodePoolRequest. Nothing was sent.`,
      );
      expect(refused.made).toEqual([]);

      const created = await home.nvkectl(["create", "nodepools", "-f", poolFile]);
      expect(created.exitCode, created.stderr).toBe(0);
      expect(created.stdout).toMatch(
        /^nodepool "workers" created in cluster "capd-demo": ID [0-9a-f-]{36}, phase Provisioning\n$/,
      );

      // The same request again, from stdin (-f -): it reaches the controller, which refuses the name (409: exit 5).
      const again = await home.nvkectl(["create", "nodepool", "-f", "-"], { input: text });
      expect(again.exitCode).toBe(5);
      expect(again.stderr).toContain('"workers"');
    });

    test("get nodepools --cluster lists the cluster's pools; NAME shows one", async () => {
      const table = await home.nvkectl(["get", "nodepools", "--cluster", "capd-demo"]);
      expect(table.exitCode, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^NAME\s+ID\s+ROLE\s+DESIRED\s+READY\s+PENDING\s+PHASE\s+AGE\n/);
      expect(table.stdout).toMatch(/\ncontrol-plane\s+\S+\s+control-plane\s+1\s/);
      expect(table.stdout).toMatch(/\nworkers\s+\S+\s+worker\s+2\s/);
      const one = JSON.parse(
        (await home.nvkectl(["get", "nodepool", "workers", "--cluster", "capd-demo", "-o", "json"])).stdout,
      );
      expect(one).toMatchObject({ name: "workers", clusterID: clusterId, desiredNodeCount: 2 });
      const unknown = await home.nvkectl(["get", "nodepools", "nope", "--cluster", "capd-demo"]);
      expect(unknown.exitCode).toBe(4);
      expect(unknown.stderr).toContain('error: node pool "nope" not found in cluster "capd-demo"');
    });

    test("scale nodepool changes desiredNodeCount up and down and prints current → desired", async () => {
      const up = await home.nvkectl(["scale", "nodepool", "workers", "--cluster", "capd-demo", "--replicas", "5"]);
      expect(up.exitCode, up.stderr).toBe(0);
      expect(up.stdout).toBe('nodepool "workers" scaled: 2 → 5\n');
      const down = await home.nvkectl(["scale", "nodepools", "workers", "--cluster", "capd-demo", "--replicas", "1"]);
      expect(down.stdout).toBe('nodepool "workers" scaled: 5 → 1\n');
    });

    test("a scale-up the pod CIDR has no room for is refused with the controller's own message, and nothing changes", async () => {
      const result = await home.nvkectl([
        "scale",
        "nodepool",
        "workers",
        "--cluster",
        "capd-demo",
        "--replicas",
        "300",
      ]);
      expect(result.exitCode).toBe(8);
      expect(result.stderr).toMatch(
        /^error: cannot scale node pool "workers" to 300 nodes: pod CIDR 10\.244\.0\.0\/16 has room for 256 nodes with \/24 per node \(control plane uses 1\)\n/,
      );
      const pool = JSON.parse(
        (await home.nvkectl(["get", "nodepool", "workers", "--cluster", "capd-demo", "-o", "json"])).stdout,
      );
      expect(pool.desiredNodeCount).toBe(1);
    });

    test("scale takes nothing but --replicas: another flag is refused before sending", async () => {
      const { result, made } = await counting(() =>
        home.nvkectl(["scale", "nodepool", "workers", "--cluster", "capd-demo", "--replicas", "2", "--labels", "a=b"]),
      );
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain("error: nvkectl scale nodepool has no flag --labels");
      expect(made).toEqual([]);
    });

    test("deleting the last joined control-plane pool is refused with the controller's own message", async () => {
      await eventually(async () => {
        const pool = JSON.parse(
          (await home.nvkectl(["get", "nodepool", "control-plane", "--cluster", "capd-demo", "-o", "json"])).stdout,
        );
        if (pool.status.readyNodes < 1) throw new Error("control plane not joined yet");
      }, 20_000);
      const result = await home.nvkectl(["delete", "nodepool", "control-plane", "--cluster", "capd-demo"]);
      expect(result.exitCode).toBe(5);
      expect(result.stderr.split("\n")[0]).toBe(
        'error: node pool "control-plane" is the last joined control-plane pool of cluster "capd-demo"; delete the cluster instead',
      );
    });

    test("delete nodepool is asynchronous: it returns at once and the pool drains, then goes", async () => {
      const result = await home.nvkectl(["delete", "nodepools", "workers", "--cluster", "capd-demo"]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toBe('nodepool "workers" deleting: its nodes are drained, then removed\n');
      await eventually(async () => {
        const list = JSON.parse(
          (await home.nvkectl(["get", "nodepools", "--cluster", "capd-demo", "-o", "json"])).stdout,
        ).items;
        if (list.some((pool: { name: string }) => pool.name === "workers")) throw new Error("still there");
      }, 20_000);
    });
  });

  describe("the habits operators reach for", () => {
    const poolFile = (name: string, prefix = name) =>
      readFile(example("nico-mock-nodepool.yaml"), "utf8").then((text) =>
        text
          .replace("name: workers", `name: ${name}`)
          .replace("nodeNamePrefix: capd-demo-worker", `nodeNamePrefix: ${prefix}`),
      );

    test("a labels-only patch keeps the description, a description-only patch keeps the labels", async () => {
      expect((await home.nvkectl(["patch", "cluster", "capd-demo", "-p", '{"description": "kept"}'])).exitCode).toBe(0);
      expect((await home.nvkectl(["patch", "cluster", "capd-demo", "-p", '{"labels": {"x": "1"}}'])).exitCode).toBe(0);
      expect(await clusterJson("capd-demo")).toMatchObject({ description: "kept", labels: { x: "1", owner: "sre" } });
      expect((await home.nvkectl(["patch", "cluster", "capd-demo", "-p", '{"description": "again"}'])).exitCode).toBe(
        0,
      );
      expect(await clusterJson("capd-demo")).toMatchObject({ description: "again", labels: { x: "1", owner: "sre" } });
    });

    test("create nodepool --cluster fills clusterID; get nodepools NAME --wait returns once every node runs", async () => {
      const file = join(home.path, "gpus.yaml");
      await writeFile(file, await poolFile("gpus"));
      const created = await home.nvkectl(["create", "nodepool", "-f", file, "--cluster", "capd-demo"]);
      expect(created.exitCode, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^nodepool "gpus" created in cluster "capd-demo": ID [0-9a-f-]{36}, phase /);

      const ready = await home.nvkectl([
        ...["get", "nodepools", "gpus", "--cluster", "capd-demo", "--wait", "--poll-interval", "200ms", "-o", "json"],
      ]);
      expect(ready.exitCode, ready.stderr).toBe(0);
      expect(JSON.parse(ready.stdout)).toMatchObject({
        name: "gpus",
        clusterID: clusterId,
        status: { phase: "Ready", readyNodes: 2 },
      });

      // Scaling keeps the pool's labels, taints and release
      expect(
        (await home.nvkectl(["scale", "nodepool", "gpus", "--cluster", "capd-demo", "--replicas", "3"])).exitCode,
      ).toBe(0);
      const scaled = JSON.parse(
        (await home.nvkectl(["get", "nodepool", "gpus", "--cluster", "capd-demo", "-o", "json"])).stdout,
      );
      expect(scaled).toMatchObject({
        desiredNodeCount: 3,
        nodePoolReleaseName: "nvke-workers-1-31",
        labels: { "node-role.kubernetes.io/worker": "" },
      });

      // A file whose clusterID names another cluster is refused before sending
      const other = join(home.path, "other.yaml");
      await writeFile(other, `${await poolFile("other")}clusterID: 00000000-0000-4000-8000-000000000001\n`);
      const { result, made } = await counting(() =>
        home.nvkectl(["create", "nodepool", "-f", other, "--cluster", "capd-demo"]),
      );
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain(
        `field clusterID: "00000000-0000-4000-8000-000000000001" differs from --cluster capd-demo (cluster "capd-demo" has ID ${clusterId})`,
      );
      expect(made.map((line) => line.split(" ")[0])).toEqual(["GET"]);
    });

    test("two pools of one cluster cannot share a nodeNamePrefix: the controller's own message, exit 5", async () => {
      const file = join(home.path, "clash.yaml");
      await writeFile(file, await poolFile("clash", "gpus"));
      const result = await home.nvkectl(["create", "nodepool", "-f", file, "--cluster", "capd-demo"]);
      expect(result.exitCode).toBe(5);
      expect(result.stderr.split("\n")[0]).toBe(
        'error: nodeNamePrefix "gpus" is already used by node pool "gpus" of cluster "capd-demo": node names (<nodeNamePrefix>-<n>) must be unique within a cluster, so each pool needs a prefix of its own',
      );
    });

    test("a release change is refused when it downgrades or skips a minor version, with the controller's message", async () => {
      const release = (minor: number) => ({
        image: join(home.path, `image-${minor}.json`),
        cluster: join(home.path, `release-${minor}.json`),
      });
      for (const minor of [29, 33]) {
        const image = load(await readFile(example("machineimage.yaml"), "utf8")) as Record<string, unknown>;
        const clusterRelease = load(await readFile(example("clusterrelease.yaml"), "utf8")) as Record<string, unknown>;
        const files = release(minor);
        await writeFile(
          files.image,
          JSON.stringify({ ...image, name: `img-1-${minor}`, kubernetesVersion: `v1.${minor}.0` }),
        );
        await writeFile(
          files.cluster,
          JSON.stringify({
            ...clusterRelease,
            name: `nvke-1-${minor}`,
            kubernetesVersion: `v1.${minor}.0`,
            machineImageName: `img-1-${minor}`,
          }),
        );
        expect((await home.nvkectl(["create", "machineimage", "-f", files.image])).exitCode).toBe(0);
        expect((await home.nvkectl(["create", "clusterrelease", "-f", files.cluster])).exitCode).toBe(0);
      }
      const down = await home.nvkectl(["patch", "cluster", "capd-demo", "-p", '{"clusterReleaseName": "nvke-1-29"}']);
      expect(down.exitCode).toBe(8);
      expect(down.stderr.split("\n")[0]).toBe(
        'error: cannot move cluster "capd-demo" from Kubernetes v1.31.4 (cluster release "nvke-1-31") to v1.29.0 (cluster release "nvke-1-29"): a control plane is never downgraded; pick a release of v1.31.4 or newer',
      );
      const skip = await home.nvkectl(["patch", "cluster", "capd-demo", "-p", '{"clusterReleaseName": "nvke-1-33"}']);
      expect(skip.exitCode).toBe(8);
      expect(skip.stderr).toContain(
        "a control plane is upgraded one minor version at a time; move to a v1.32 release first",
      );
      expect((await clusterJson("capd-demo")).kubernetesVersion).toBe("v1.31.4");
    });

    test("get takes several names, -l, -o name, -o jsonpath, --sort-by, --no-headers and --show-labels", async () => {
      const file = join(home.path, "habits-b.json");
      const request = load(await readFile(example("capd-cluster.yaml"), "utf8")) as Record<string, unknown>;
      await writeFile(file, JSON.stringify({ ...request, name: "habits-b", labels: { team: "b" } }));
      expect((await home.nvkectl(["create", "cluster", "-f", file])).exitCode).toBe(0);

      const several = await home.nvkectl(["get", "clusters", "habits-b", "capd-demo", "nope"]);
      expect(several.exitCode).toBe(4);
      expect(several.stdout).toMatch(/^NAME\s+ID.*\nhabits-b\s.*\ncapd-demo\s.*\n$/);
      expect(several.stderr.split("\n")[0]).toBe('error: cluster "nope" not found');

      expect((await home.nvkectl(["get", "clusters", "-l", "team=b", "-o", "name"])).stdout).toBe("cluster/habits-b\n");
      expect((await home.nvkectl(["get", "clusters", "-l", "team notin (b)", "-o", "name"])).stdout).toBe(
        "cluster/capd-demo\n",
      );
      const template = "{range .items[*]}{.name}{'\\t'}{.labels.team}{'\\n'}{end}";
      const jsonpath = await home.nvkectl(["get", "clusters", "--sort-by", ".name", "-o", `jsonpath=${template}`]);
      expect(jsonpath.stdout).toBe("capd-demo\t\nhabits-b\tb\n");
      expect((await home.nvkectl(["get", "clusters", "habits-b", "-o", "jsonpath={.id}"])).stdout).toMatch(
        /^[0-9a-f-]{36}$/,
      );
      const table = await home.nvkectl(["get", "clusters", "--sort-by", "{.name}", "--no-headers", "--show-labels"]);
      expect(table.stdout).toMatch(/^capd-demo\s.*\senvironment=lab,owner=sre,x=1\nhabits-b\s.*\steam=b\n$/);
    });

    test("-w of one cluster with -o yaml is a YAML stream, --- between documents, ending at Ready", async () => {
      const file = join(home.path, "habits-c.json");
      const request = load(await readFile(example("capd-cluster.yaml"), "utf8")) as Record<string, unknown>;
      await writeFile(file, JSON.stringify({ ...request, name: "habits-c" }));
      expect((await home.nvkectl(["create", "cluster", "-f", file])).exitCode).toBe(0);
      const watched = await home.nvkectl([
        "get",
        "clusters",
        "habits-c",
        "-w",
        "-o",
        "yaml",
        "--poll-interval",
        "200ms",
      ]);
      expect(watched.exitCode, watched.stderr).toBe(0);
      const documents = loadAll(watched.stdout) as Array<{ name: string; status: { phase: string } }>;
      expect(documents.length).toBeGreaterThanOrEqual(2);
      expect(watched.stdout.match(/^---$/gm)).toHaveLength(documents.length - 1);
      expect(documents.map((d) => d.name)).toEqual(documents.map(() => "habits-c"));
      expect(documents[0]?.status.phase).toBe("Provisioning");
      expect(documents.at(-1)?.status.phase).toBe("Ready");
    });

    test("-w on the list prints the clusters, then the changes, in aligned rows under one header", async () => {
      // The patch comes 2.5 s into an 8 s watch: after the watch's first list even on a loaded
      // machine (with 1 s of 3 s, a loaded CI run patched before the list, and saw one row).
      const watched = home.nvkectl(["get", "clusters", "-w", "--timeout", "8s", "--poll-interval", "200ms"]);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await home.nvkectl(["patch", "cluster", "habits-b", "-p", '{"description": "watched"}'])).exitCode).toBe(
        0,
      );
      const result = await watched;
      expect(result.exitCode, result.stderr).toBe(0);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines.filter((line) => line.startsWith("NAME "))).toHaveLength(1);
      expect(lines.filter((line) => line.startsWith("habits-b "))).toHaveLength(2);
      const column = (lines[0] ?? "").indexOf("PHASE");
      for (const line of lines.slice(1)) expect(line.slice(column)).toMatch(/^(Ready|Provisioning)\s/);
      // AGE is the age when the row is printed, as kubectl's -w shows it, not the one at the start.
      const ageAt = (line: string) => {
        const text = line.slice((lines[0] ?? "").indexOf("AGE")).split(/\s+/)[0] ?? "";
        const units: Record<string, number> = { d: 86400, h: 3600, m: 60, s: 1 };
        return [...text.matchAll(/(\d+)([dhms])/g)].reduce(
          (sum, [, n, unit]) => sum + Number(n) * (units[unit ?? "s"] ?? 0),
          0,
        );
      };
      const [first, changed] = lines.filter((line) => line.startsWith("habits-b "));
      expect(ageAt(changed ?? "")).toBeGreaterThan(ageAt(first ?? ""));
    });

    test("describe cluster shows its conditions and the tree of its pools and nodes; explain reads /api/docs", async () => {
      const described = await home.nvkectl(["describe", "cluster", "capd-demo"]);
      expect(described.exitCode, described.stderr).toBe(0);
      expect(described.stdout).toMatch(/^Name: {9}capd-demo\nID: {11}[0-9a-f-]{36}\n/);
      expect(described.stdout).toMatch(/\n {2}Ready {15}True {5}Ready /);
      expect(described.stdout).toMatch(/\n {2}├─ControlPlane\n {2}│ └─NodePool\/control-plane +1\/1 +Ready /);
      expect(described.stdout).toMatch(/\n {4}└─NodePool\/gpus +\d\/3 /);
      expect(described.stdout).toContain("Node/gpus-0");
      expect(described.stdout).toContain("Recent transitions:\n");

      const explained = await home.nvkectl(["explain", "cluster.status.conditions"]);
      expect(explained.exitCode, explained.stderr).toBe(0);
      expect(explained.stdout).toMatch(/^KIND: {5}Cluster\nVERSION: {2}v1\n\nFIELD: conditions <\[\]Object>\n/);
      const unknown = await home.nvkectl(["explain", "cluster.nope"]);
      expect(unknown.exitCode).toBe(4);
    });

    test("delete takes several names, --ignore-not-found and --wait, for node pools as for clusters", async () => {
      const missing = await home.nvkectl(["delete", "cluster", "nope-1", "nope-2"]);
      expect(missing.exitCode).toBe(4);
      expect(missing.stderr.split("\n")[0]).toBe('error: clusters "nope-1" and "nope-2" not found');

      const pools = await home.nvkectl([
        ...["delete", "nodepool", "gpus", "nope", "--cluster", "capd-demo", "--ignore-not-found", "--wait"],
        ...["--poll-interval", "200ms"],
      ]);
      expect(pools.exitCode, pools.stderr).toBe(0);
      expect(pools.stdout).toBe(
        'nodepool "gpus" deleting: its nodes are drained, then removed\nnodepool "gpus" deleted\n',
      );

      const clusters = await home.nvkectl([
        ...["delete", "clusters", "habits-b", "nope", "habits-c", "--ignore-not-found", "--wait"],
        ...["--poll-interval", "200ms"],
      ]);
      expect(clusters.exitCode, clusters.stderr).toBe(0);
      expect(clusters.stdout).toMatch(
        /^cluster "habits-b" deleting \(ID [0-9a-f-]{36}\)\ncluster "habits-c" deleting \(ID [0-9a-f-]{36}\)\ncluster "habits-b" deleted\ncluster "habits-c" deleted\n$/,
      );
    });
  });

  test("delete cluster --wait returns once the cluster is gone; then it is unknown (exit 4)", async () => {
    const result = await home.nvkectl(["delete", "clusters", "capd-demo", "--wait", "--poll-interval", "200ms"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`cluster "capd-demo" deleting (ID ${clusterId})\ncluster "capd-demo" deleted\n`);
    const gone = await home.nvkectl(["get", "clusters", "capd-demo"]);
    expect(gone.exitCode).toBe(4);
    expect(gone.stderr).toContain('error: cluster "capd-demo" not found');
    await eventually(async () => {
      const kubeconfig = await home.nvkectl(["get", "kubeconfig", "capd-demo"]);
      expect(kubeconfig.exitCode).toBe(4);
      expect(kubeconfig.stderr).toContain("the cluster is not Ready yet, or there is no cluster of that name");
    }, 20_000);
  });
});

describe("auth: the token cache", () => {
  test("with a cached token a read makes exactly one HTTP request and never loads @kubernetes/client-node", async () => {
    const fresh = await cliHome("nvkectl-one-request-");
    try {
      await setSite(fresh, "lab", emulator.url, admin);
      const recorder = await moduleLoadRecorder(fresh.path);
      const env = { NODE_OPTIONS: recorder.nodeOptions };

      // Given a first run, which mints the token (and so loads the Kubernetes client: the recorder sees it)
      const first = await fresh.nvkectl(["get", "clusters", "-o", "json"], { env });
      expect(first.exitCode, first.stderr).toBe(0);
      expect(await readFile(recorder.logFile, "utf8")).toContain("@kubernetes/client-node");
      await writeFile(recorder.logFile, "");

      // When a read runs with the token cached
      const { result, made } = await counting(() => fresh.nvkectl(["get", "clusters", "-o", "json", "-v"], { env }));

      // Then it made one request, loaded no Kubernetes client, and said it used the cached token
      expect(result.exitCode).toBe(0);
      expect(made).toHaveLength(1);
      expect(made[0]).toMatch(/^GET \/api\/v1\/clusters 200 /);
      expect(await readFile(recorder.logFile, "utf8")).toBe("");
      expect(result.stderr).toContain("debug: using cached token, expires in");
    } finally {
      await fresh.cleanup();
    }
  });

  test("a cached token the controller rejects (401) is dropped, a new one minted, and the request retried once", async () => {
    const fresh = await cliHome("nvkectl-401-");
    try {
      await setSite(fresh, "lab", emulator.url, admin);
      expect((await fresh.nvkectl(["get", "clusters"])).exitCode).toBe(0);
      const cacheFile = join(fresh.tokenCacheDir, "lab", "nke-clients_nke-client.json");
      const entry = JSON.parse(await readFile(cacheFile, "utf8"));
      const realToken = entry.state.token as string;
      expect(realToken).toMatch(/^ey/);
      const garbage = "garbage-token-the-controller-does-not-know";
      entry.state.token = garbage;
      await writeFile(cacheFile, JSON.stringify(entry), { mode: 0o600 });

      const { result, made } = await counting(() => fresh.nvkectl(["get", "clusters", "-o", "json", "-v"]));
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).items).toEqual([]);
      expect(made.map((line) => line.split(" ").slice(0, 3).join(" "))).toEqual([
        "GET /api/v1/clusters 401",
        "GET /api/v1/clusters 200",
      ]);
      expect(result.stderr).toContain("dropping the cached token and retrying once");
      expect(result.stderr).toContain("debug: minted a token for ServiceAccount nke-clients/nke-client");
      // No token, the bad one or the new one, reaches the output.
      const renewed = JSON.parse(await readFile(cacheFile, "utf8")).state.token as string;
      expect(renewed).toMatch(/^ey/);
      for (const token of [garbage, renewed, realToken]) expect(result.stdout + result.stderr).not.toContain(token);
    } finally {
      await fresh.cleanup();
    }
  });

  test("a kubeconfig that may not read the auth ConfigMap fails with exit 7 and sends no request", async () => {
    const nobody = await site.plane.kubeconfigFor({ user: "nvkectl-no-rbac" });
    const fresh = await cliHome("nvkectl-denied-");
    try {
      await setSite(fresh, "lab", emulator.url, nobody);
      const { result, made } = await counting(() => fresh.nvkectl(["get", "clusters"]));
      expect(result.exitCode).toBe(7);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(
        'user "nvkectl-no-rbac" may not read the NVKE auth ConfigMap nvke-auth-config in namespace nke-controller',
      );
      expect(made).toEqual([]);
    } finally {
      await fresh.cleanup();
    }
  });
});

describe("failures get a clear message and a documented exit code, and change nothing", () => {
  const clusterCount = () => Object.keys(emulator.state.clusters).length;

  test("an unknown cluster exits 4", async () => {
    for (const args of [
      ["get", "clusters", "nope"],
      ["patch", "cluster", "nope", "--patch", '{"description": "x"}'],
      ["delete", "cluster", "nope"],
      ["get", "nodepools", "--cluster", "nope"],
      ["scale", "nodepool", "workers", "--cluster", "nope", "--replicas", "1"],
    ]) {
      const result = await home.nvkectl(args);
      expect(result.exitCode, args.join(" ")).toBe(4);
      expect(result.stderr).toContain('error: cluster "nope" not found');
    }
  });

  test("an unreachable controller (a closed port) exits 6", async () => {
    const port = await closedPort();
    const result = await home.nvkectl(["get", "clusters", "--site", "down"], {});
    expect(result.exitCode).toBe(4); // no such site yet
    await setSite(home, "down", `http://127.0.0.1:${port}`, admin);
    const before = clusterCount();
    const create = await home.nvkectl(["create", "cluster", "-f", example("capd-cluster.yaml"), "--site", "down"]);
    expect(create.exitCode).toBe(6);
    expect(create.stderr).toContain(
      `error: cannot reach the NVKE controller at http://127.0.0.1:${port}: connection refused`,
    );
    expect(clusterCount()).toBe(before);
  });

  test("a controller answering 500 with HTML, or with its error body, exits 6 with what it said", async () => {
    const before = clusterCount();
    emulator.chaos("html500");
    const html = await home.nvkectl(["create", "cluster", "-f", example("capd-cluster.yaml")]);
    expect(html.exitCode).toBe(6);
    expect(html.stderr).toContain(
      "(HTTP 500, text/html) is not the NVKE controller's error body: 500 Internal Server Error",
    );
    expect(html.stderr).not.toContain("<html>");

    emulator.chaos("json500");
    const json = await home.nvkectl(["get", "clusters"]);
    expect(json.exitCode).toBe(6);
    expect(json.stderr).toContain("error: internal error: emulated failure (chaos)\n");
    expect(clusterCount()).toBe(before);
  });
});

/** A non-loopback IPv4 address of this machine, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === "IPv4" && !address.internal)?.address;

describe("the bearer token and plain HTTP", () => {
  test.skipIf(externalAddress === undefined)(
    "a token sent over plain HTTP to a non-loopback address is warned about on stderr; stdout stays clean",
    async () => {
      const remote = await site.emulator({ host: "0.0.0.0", authConfigTtlMs: 0 });
      const fresh = await cliHome("nvkectl-plain-http-");
      try {
        const url = remote.url.replace("0.0.0.0", externalAddress ?? "");
        await setSite(fresh, "remote", url, admin);
        const result = await fresh.nvkectl(["get", "clusters", "-o", "json"]);
        expect(result.exitCode, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout).items).toEqual([]);
        expect(result.stderr).toContain(
          `warning: ${new URL(url).origin} is plain HTTP: a bearer token will be sent in clear text`,
        );
      } finally {
        await fresh.cleanup();
        await remote.stop();
      }
    },
  );

  test("with no auth ConfigMap anywhere, no token is sent and -v says auth is off", async () => {
    await kubectl(admin, ["delete", "configmap", "nvke-auth-config", "-n", "nke-controller", "--ignore-not-found"]);
    const fresh = await cliHome("nvkectl-auth-off-");
    try {
      await setSite(fresh, "lab", emulator.url, admin);
      const { result, made } = await counting(() => fresh.nvkectl(["get", "clusters", "-v"]));
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain("debug: auth off: no auth ConfigMap in nke-controller or cloud-workflow-engine");
      expect(made).toHaveLength(1);
      expect(made[0]).not.toContain("user=");
    } finally {
      await fresh.cleanup();
      await apply(admin, authConfigMap(AUDIENCE));
    }
  });
});
