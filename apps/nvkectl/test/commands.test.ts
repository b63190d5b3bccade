import { mkdir, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// What the cluster and node pool commands refuse before they talk to anything: the site's
// controller URL points at a server that counts requests, and it must see none. (The
// commands against a real controller are in clusters.int.test.ts.)

let home: CliHome;
let controller: Server;
let received = 0;

beforeAll(async () => {
  home = await cliHome("nvkectl-commands-");
  controller = createServer((req, res) => {
    received++;
    req.resume();
    res.writeHead(500, { "content-type": "text/plain" }).end("this test server answers nothing");
  });
  await new Promise<void>((resolve) => controller.listen(0, "127.0.0.1", resolve));
  const { port } = controller.address() as AddressInfo;
  await writeFile(join(home.path, "site.kubeconfig"), "apiVersion: v1\nkind: Config\n");
  const set = await home.nvkectl([
    "config",
    "set-site",
    "lab",
    "--url",
    `http://127.0.0.1:${port}`,
    "--kubeconfig",
    "site.kubeconfig",
  ]);
  expect(set.exitCode, set.stderr).toBe(0);
});

afterAll(async () => {
  await new Promise((resolve) => controller.close(resolve));
  expect(received).toBe(0);
  await home.cleanup();
});

const CLUSTER_FIELDS =
  "name, description, provider, clusterReleaseName, clusterReleaseID, controlPlaneConfig, network, nico, infra, labels";

async function file(name: string, content: string): Promise<string> {
  const path = join(home.path, name);
  await writeFile(path, content);
  return path;
}

describe("create -f refuses invalid input with every problem and its field path, exit 3, nothing sent", () => {
  it("names each bad field of a CreateClusterRequest: wrong types, unknown fields, missing ones", async () => {
    const path = await file(
      "bad-cluster.yaml",
      "name: Bad_Name\nprovider: aws\nsurprise: 1\ncontrolPlaneConfig:\n  replicas: two\nnetwork:\n  podCIDR: 10.244.0.0/16\n",
    );
    const result = await home.nvkectl(["create", "cluster", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("");
    // Every problem in one pass, each with the file and the field path
    for (const line of [
      `error: ${path} has 7 problems; nothing was sent to the controller`,
      `  ${path}:1: field name: "Bad_Name" must consist of lower case letters, digits and '-', and start and end with a letter or digit`,
      `  ${path}:2: field provider: "aws" must be "capd" or "nico"`,
      `  ${path}:5: field controlPlaneConfig.replicas: "two" must be a whole number`,
      `  ${path}:6: field network.serviceCIDR: is required`,
      `  ${path}:3: field surprise: is not a known field; the fields here are ${CLUSTER_FIELDS}`,
      `  ${path}:1: field clusterReleaseName: give exactly one of clusterReleaseName and clusterReleaseID`,
      `  ${path}:1: field nico: a nico or an infra payload is required; it chooses the node type`,
      "next: fix every problem listed above and run the command again",
    ]) {
      expect(result.stderr).toContain(`${line}\n`);
    }
  });

  it("names the line of each problem in a request file, in line order; a trailing --- is no second document", async () => {
    const path = await file(
      "nodepool.yaml",
      [
        "# workers for the lab cluster", // 1
        "name: workers", // 2
        "nodeNamePrefix: w", // 3
        "clusterID: 0b8e5b52-3b8e-4a8e-9d0e-1f0a3c1e2d4f", // 4
        "nico:", // 5
        "  instanceType: a", // 6
        "desiredNodeCount: three", // 7
        "taints:", // 8
        "  - key: gpu", // 9
        "    effect: Sometimes", // 10
        "---", // 11
        "",
      ].join("\n"),
    );
    const result = await home.nvkectl(["create", "nodepool", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe(
      `error: ${path} has 2 problems; nothing was sent to the controller\n` +
        `  ${path}:7: field desiredNodeCount: "three" must be a whole number\n` +
        `  ${path}:10: field taints[0].effect: "Sometimes" must be "NoSchedule" or "PreferNoSchedule" or "NoExecute"\n` +
        "next: fix every problem listed above and run the command again\n",
    );
  });

  it("names the line of each problem in a JSON request, a missing field at the object that lacks it", async () => {
    const path = await file(
      "nodepool.json",
      [
        "{",
        '  "name": "workers",',
        '  "nodeNamePrefix": "w",',
        '  "desiredNodeCount": 2,',
        '  "clusterID": "not-a-uuid",',
        '  "infra": {"machineTemplate": {"apiVersion": "v1"}}',
        "}",
      ].join("\n"),
    );
    const result = await home.nvkectl(["create", "nodepool", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`  ${path}:5: field clusterID: "not-a-uuid" must be a UUID\n`);
    expect(result.stderr).toContain(`  ${path}:6: field infra.machineTemplate.kind: is required\n`);
  });

  it("reports malformed YAML with its line and column", async () => {
    const path = await file("broken.yaml", "name: a\n  provider: [capd\n");
    const result = await home.nvkectl(["create", "cluster", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`error: ${path} has 1 problem; nothing was sent to the controller`);
    expect(result.stderr).toMatch(new RegExp(`  ${path}:2: column \\d+: is not valid YAML or JSON: `));
  });

  it("reports malformed JSON with its line and column", async () => {
    const path = await file("broken.json", '{\n  "name": "a",\n  "provider": "capd"\n  "network": {}\n}\n');
    const result = await home.nvkectl(["create", "cluster", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(new RegExp(`  ${path}:4: column \\d+: is not valid YAML or JSON: `));
  });

  it("reads a valid JSON request like YAML and checks it the same way", async () => {
    const path = await file("cluster.json", JSON.stringify({ name: "a", provider: "capd", nodeCount: 3 }));
    const result = await home.nvkectl(["create", "clusters", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `  ${path}:1: field nodeCount: is not a known field; the fields here are ${CLUSTER_FIELDS}\n`,
    );
    expect(result.stderr).toContain(`  ${path}:1: field controlPlaneConfig: is required`);
  });

  it("refuses a node pool file with several documents, naming the file and the count", async () => {
    const pool =
      "name: workers\nnodeNamePrefix: w\ndesiredNodeCount: 1\nclusterID: 0b8e5b52-3b8e-4a8e-9d0e-1f0a3c1e2d4f\nnico: {instanceType: a}\n";
    const path = await file("pools.yaml", `${pool}---\n${pool}---\n${pool}`);
    const result = await home.nvkectl(["create", "nodepool", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe(
      `error: ${path} holds 3 documents; it must hold exactly one CreateNodePoolRequest. Nothing was sent.\n` +
        "why: each invocation sends one request, and a partial set of creations is hard to undo\n" +
        "next: split the file and run the command once per CreateNodePoolRequest\n",
    );
  });

  it("lists the four required node pool fields that are missing", async () => {
    const path = await file("pool-empty.yaml", "labels: {}\n");
    const result = await home.nvkectl(["create", "nodepools", "-f", path]);
    expect(result.exitCode).toBe(3);
    for (const field of ["name", "nodeNamePrefix", "desiredNodeCount", "clusterID"]) {
      expect(result.stderr).toContain(`  ${path}:1: field ${field}: is required\n`);
    }
  });

  it("refuses an empty file, a list, and a release request with bad fields", async () => {
    const empty = await file("empty.yaml", "# nothing here\n");
    expect((await home.nvkectl(["create", "cluster", "-f", empty])).stderr).toContain(
      `error: ${empty} holds no document; it must hold one CreateClusterRequest. Nothing was sent.`,
    );
    const list = await file("list.yaml", "- a\n- b\n");
    const listed = await home.nvkectl(["create", "machineimage", "-f", list]);
    expect(listed.exitCode).toBe(3);
    expect(listed.stderr).toContain(`  ${list}: must be a CreateMachineImageRequest (a mapping of fields), not a list`);
    const image = await file("image.yaml", "name: img\nversion: one\nkubernetesVersion: 1.31\narchitecture: riscv\n");
    const bad = await home.nvkectl(["create", "machineimages", "-f", image]);
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toContain(`  ${image}:2: field version: "one" must be a semantic version such as 1.2.0`);
    expect(bad.stderr).toContain(`  ${image}:1: field image: is required`);
  });

  it("reads the request from stdin for -f -, naming stdin in each problem", async () => {
    const piped = await home.nvkectl(["create", "cluster", "-f", "-"], {
      input: "name: Bad_Name\nprovider: capd\nnetwork: {}\n",
    });
    expect(piped.exitCode).toBe(3);
    expect(piped.stderr).toContain("error: stdin has");
    expect(piped.stderr).toContain("  stdin:1: field name: ");
    const pools = await home.nvkectl(["create", "nodepool", "-f", "-"], { input: "name: a\n---\nname: b\n" });
    expect(pools.stderr).toContain("error: stdin holds 2 documents; it must hold exactly one CreateNodePoolRequest.");
    const patch = await home.nvkectl(["patch", "cluster", "a", "--patch-file", "-"], { input: "id: x\n" });
    expect(patch.exitCode).toBe(3);
    expect(patch.stderr).toContain("  stdin:1: field id: is set by the controller and cannot be patched");
  });

  it("says a file that is not there is not there (exit 4)", async () => {
    const result = await home.nvkectl(["create", "cluster", "-f", join(home.path, "nope.yaml")]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(`error: cannot read ${join(home.path, "nope.yaml")}: ENOENT`);
  });
});

describe("patch and scale check their input before sending", () => {
  it("refuses a patch that is not valid JSON, is empty, or is not an object (exit 3)", async () => {
    const broken = await home.nvkectl(["patch", "cluster", "a", "--patch", '{"description": "x"']);
    expect(broken.exitCode).toBe(3);
    expect(broken.stderr).toContain("  --patch:1: column 20: is not valid YAML or JSON: ");
    const empty = await home.nvkectl(["patch", "cluster", "a", "--patch", "{}"]);
    expect(empty.stderr).toContain("  --patch: is an empty patch: name at least one field to change");
    const list = await home.nvkectl(["patch", "nodepool", "a", "--cluster", "c", "--patch", "[1]"]);
    expect(list.stderr).toContain("  --patch: must be a merge patch (a mapping of fields), not a list");
  });

  it("refuses fields a patch may not change, naming why", async () => {
    const patch = await file("patch.yaml", "id: x\nname: other\ncontrolPlaneConfig:\n  replicas: 2\n");
    const result = await home.nvkectl(["patch", "clusters", "a", "--patch-file", patch]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`  ${patch}:2: field name: cannot be changed once the cluster exists`);
    expect(result.stderr).toContain(`  ${patch}:1: field id: is set by the controller and cannot be patched`);
    expect(result.stderr).toContain(
      `  ${patch}:4: field controlPlaneConfig.replicas: "2" must be odd (1, 3, 5 or 7) so that etcd keeps quorum`,
    );
    // In line order, each at its line
    expect(result.stderr.split("\n").filter((line) => line.startsWith(`  ${patch}:`))).toEqual([
      `  ${patch}:1: field id: is set by the controller and cannot be patched`,
      `  ${patch}:2: field name: cannot be changed once the cluster exists`,
      `  ${patch}:4: field controlPlaneConfig.replicas: "2" must be odd (1, 3, 5 or 7) so that etcd keeps quorum`,
    ]);
    const pool = await home.nvkectl(["patch", "nodepools", "w", "--cluster", "c", "--patch", '{"role": "worker"}']);
    expect(pool.stderr).toContain("  --patch: field role: cannot be changed once the node pool exists");
  });

  it("takes exactly one of --patch and --patch-file (exit 2)", async () => {
    expect((await home.nvkectl(["patch", "cluster", "a"])).exitCode).toBe(2);
    expect((await home.nvkectl(["patch", "cluster", "a", "--patch", "{}", "--patch-file", "x"])).exitCode).toBe(2);
  });

  it("scale takes a whole --replicas from 0 to 5000 and nothing else (exit 2)", async () => {
    for (const replicas of ["-1", "two", "5001"]) {
      const result = await home.nvkectl(["scale", "nodepool", "w", "--cluster", "c", "--replicas", replicas]);
      expect(result.exitCode, replicas).toBe(2);
    }
    const extra = await home.nvkectl([
      "scale",
      "nodepool",
      "w",
      "--cluster",
      "c",
      "--replicas",
      "2",
      "--role",
      "worker",
    ]);
    expect(extra.exitCode).toBe(2);
    expect(extra.stderr).toContain("Nonexistent flag: --role");
    expect((await home.nvkectl(["scale", "nodepool", "w", "--replicas", "2"])).exitCode).toBe(2);
  });

  it("--watch and --wait need a cluster name, and --timeout a duration (exit 2)", async () => {
    const watch = await home.nvkectl(["get", "clusters", "--watch"]);
    expect(watch.exitCode).toBe(2);
    expect(watch.stderr).toContain("error: --watch needs a cluster NAME");
    const timeout = await home.nvkectl(["get", "clusters", "a", "--wait", "--timeout", "soon"]);
    expect(timeout.exitCode).toBe(2);
    expect(timeout.stderr).toContain('error: --timeout "soon" is not a duration');
  });
});

describe("aliases (NV-1)", () => {
  it.each([
    ["create cluster", "create clusters"],
    ["get clusters", "get cluster"],
    ["patch cluster", "patch clusters"],
    ["delete cluster", "delete clusters"],
    ["create nodepool", "create nodepools"],
    ["get nodepools", "get nodepool"],
    ["patch nodepool", "patch nodepools"],
    ["delete nodepool", "delete nodepools"],
  ])("%s is also %s", async (command, alias) => {
    const canonical = await home.nvkectl([...command.split(" "), "--help"]);
    const aliased = await home.nvkectl([...alias.split(" "), "--help"]);
    expect(canonical.exitCode).toBe(0);
    expect(aliased.exitCode).toBe(0);
    expect(aliased.stdout.split("\n")[0]).toBe(canonical.stdout.split("\n")[0]);
    expect(canonical.stdout).toContain(`ALIASES\n  $ nvkectl ${alias}\n`);
  });
});

describe("commands that read the site cluster directly", () => {
  it("get providers says kubectl is missing from PATH (exit 9)", async () => {
    const empty = join(home.path, "empty-bin");
    await mkdir(empty, { recursive: true });
    const result = await home.nvkectl(["get", "providers"], { env: { PATH: empty } });
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain("error: kubectl was not found on PATH");
  });

  it("get kubeconfig refuses a name that cannot be a cluster's (exit 3), and a missing site kubeconfig (exit 4)", async () => {
    const bad = await home.nvkectl(["get", "kubeconfig", "Not_A_Name"]);
    expect(bad.exitCode).toBe(3);
    const other = await cliHome("nvkectl-commands-gone-");
    try {
      await writeFile(join(other.path, "k"), "apiVersion: v1\nkind: Config\n");
      await other.nvkectl(["config", "set-site", "lab", "--url", "https://lab.example.com", "--kubeconfig", "k"]);
      await rm(join(other.path, "k"));
      const result = await other.nvkectl(["get", "kubeconfig", "a"]);
      expect(result.exitCode).toBe(4);
      expect(result.stderr).toContain(
        `error: the site's kubeconfig ${join(other.path, "k")} does not exist or is not a file`,
      );
    } finally {
      await other.cleanup();
    }
  });
});
