import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { repoRoot } from "@nodekit/test-utils";
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

  // Issue 22 item 13: --patch read YAML while its help and docs said JSON. It takes both, as
  // kubectl's patch -p does, and every place that says what it takes says so.
  it("--patch takes JSON or YAML, as kubectl patch -p does, and its help and docs/clusters.md say so", async () => {
    const yaml = await home.nvkectl(["patch", "cluster", "a", "--patch", "id: x\nlabels: {team: a}\nname: other"]);
    expect(yaml.exitCode).toBe(3);
    expect(yaml.stderr).toContain("error: --patch has 2 problems; nothing was sent to the controller");
    expect(yaml.stderr).toContain("  --patch: field id: is set by the controller and cannot be patched");
    expect(yaml.stderr).toContain("  --patch: field name: cannot be changed once the cluster exists");
    const broken = await home.nvkectl(["patch", "cluster", "a", "-p", "labels: [unclosed"]);
    expect(broken.exitCode).toBe(3);
    expect(broken.stderr).toMatch(/ {2}--patch:1: column \d+: is not valid YAML or JSON: /);
    const flat = (text: string) => text.replace(/\s+/g, " ");
    const docs = flat(await readFile(join(repoRoot, "docs", "clusters.md"), "utf8"));
    for (const command of [
      ["patch", "cluster"],
      ["patch", "nodepool"],
    ]) {
      const help = flat((await home.nvkectl([...command, "--help"])).stdout);
      expect(help).toContain("given as JSON or YAML text with --patch (as kubectl patch -p takes it)");
      expect(help).toContain("text that is not valid JSON or YAML, or a field it may not change, exits 3");
      expect(help).toContain("The JSON merge patch as text, JSON or YAML (as kubectl patch -p takes it)");
      for (const said of [help, docs]) expect(said).not.toMatch(/JSON text with `?--patch|YAML,? in a file/);
    }
    expect(docs).toContain("given as JSON or YAML text with `--patch` (`-p`), as kubectl's `patch -p` takes it");
    expect(docs).toContain("A patch that is not valid JSON or YAML, is empty,");
  });

  it("refuses fields a patch may not change, naming why", async () => {
    const patch = await file("patch.yaml", "id: x\nname: other\ncontrolPlaneConfig:\n  replicas: 2\n");
    const result = await home.nvkectl(["patch", "clusters", "a", "--patch-file", patch]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`  ${patch}:2: field name: cannot be changed once the cluster exists`);
    expect(result.stderr).toContain(`  ${patch}:1: field id: is set by the controller and cannot be patched`);
    expect(result.stderr).toContain(
      `  ${patch}:4: field controlPlaneConfig.replicas: 2 must be odd (1, 3, 5 or 7) so that etcd keeps quorum`,
    );
    // In line order, each at its line
    expect(result.stderr.split("\n").filter((line) => line.startsWith(`  ${patch}:`))).toEqual([
      `  ${patch}:1: field id: is set by the controller and cannot be patched`,
      `  ${patch}:2: field name: cannot be changed once the cluster exists`,
      `  ${patch}:4: field controlPlaneConfig.replicas: 2 must be odd (1, 3, 5 or 7) so that etcd keeps quorum`,
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
    expect(extra.stderr).toContain("error: nvkectl scale nodepool has no flag --role");
    expect((await home.nvkectl(["scale", "nodepool", "w", "--replicas", "2"])).exitCode).toBe(2);
  });

  it("--wait needs names (and says --wait), --watch one name or none, and --timeout a duration (exit 2)", async () => {
    const wait = await home.nvkectl(["get", "clusters", "--wait"]);
    expect(wait.exitCode).toBe(2);
    expect(wait.stderr).toBe(
      "error: --wait needs the NAME of each cluster to wait for\nnext: name them: nvkectl get clusters NAME... --wait (or watch every cluster with -w)\n",
    );
    const watch = await home.nvkectl(["get", "clusters", "a", "b", "--watch"]);
    expect(watch.exitCode).toBe(2);
    expect(watch.stderr).toContain("error: --watch takes one cluster NAME, or none to watch the list");
    const pools = await home.nvkectl(["get", "nodepools", "--cluster", "c", "--wait"]);
    expect(pools.exitCode).toBe(2);
    expect(pools.stderr).toContain("error: --wait needs the NAME of each node pool to wait for");
    const timeout = await home.nvkectl(["get", "clusters", "a", "--wait", "--timeout", "soon"]);
    expect(timeout.exitCode).toBe(2);
    expect(timeout.stderr).toContain('error: --timeout "soon" is not a duration');
    const created = await home.nvkectl(["create", "cluster", "-f", "x.yaml", "--wait", "--timeout", "soon"]);
    expect(created.exitCode).toBe(2);
  });

  it("a two-document patch file says one invocation sends one merge patch", async () => {
    const path = await file("two-patches.yaml", "description: a\n---\nlabels: {x: y}\n");
    const result = await home.nvkectl(["patch", "cluster", "c", "--patch-file", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      "why: each invocation sends one merge patch, and the documents would change the object one after another",
    );
    expect(result.stderr).toContain("next: merge the documents into one patch");
    expect(result.stderr).not.toContain("creations");
  });
});

describe("label and taint keys and values follow Kubernetes' rules (checked before sending, exit 3)", () => {
  it("refuses a bad label key and value and a bad taint in a CreateNodePoolRequest", async () => {
    const path = await file(
      "bad-labels.yaml",
      [
        "name: w",
        "nodeNamePrefix: w",
        "desiredNodeCount: 1",
        "clusterID: 00000000-0000-4000-8000-000000000001",
        "nico: {instanceType: x}",
        "labels:",
        '  "Bad Key!": x',
        '  team: "not ok"',
        "taints:",
        "  - {key: a/b/c, effect: NoSchedule}",
        "",
      ].join("\n"),
    );
    const result = await home.nvkectl(["create", "nodepool", "-f", path]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `${path}:6: field labels: has a key "Bad Key!" that is not a valid label key: it has a name that must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit`,
    );
    expect(result.stderr).toContain(`${path}:8: field labels.team: "not ok" must be empty, or it must consist`);
    expect(result.stderr).toContain(
      `${path}:10: field taints[0].key: "a/b/c" is not a valid key: it may hold one '/' at most`,
    );
  });

  it("refuses a bad label in a patch", async () => {
    const result = await home.nvkectl(["patch", "cluster", "c", "-p", '{"labels": {"Bad Key!": "x"}}']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('--patch: field labels: has a key "Bad Key!" that is not a valid label key');
  });
});

describe("kubectl's get habits: what is refused before anything is read", () => {
  it("a jsonpath template that does not parse, or an unknown -o, is a usage error (exit 2)", async () => {
    const template = await home.nvkectl(["get", "clusters", "-o", "jsonpath={.items[*].name"]);
    expect(template.exitCode).toBe(2);
    expect(template.stderr).toContain(
      'error: -o jsonpath={.items[*].name: the template has an unclosed action at character 1: a "{" without its "}"\n',
    );
    const range = await home.nvkectl(["get", "clusters", "-o", "jsonpath={range .items[*]}{.name}"]);
    expect(range.stderr).toContain("the template has a {range .items[*]} without its {end}");
    const unknown = await home.nvkectl(["get", "clusters", "-o", "tabel"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain(
      'error: -o "tabel" is not an output format; use table, wide, json, yaml, name or jsonpath=TEMPLATE\n',
    );
    expect(unknown.stderr).not.toContain("unexpected failure");
  });

  it("a selector that does not parse, names with a selector, and an empty --sort-by are usage errors (exit 2)", async () => {
    const bad = await home.nvkectl(["get", "clusters", "-l", "env=prod,,x"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(
      'error: --selector "env=prod,,x" has an empty requirement (two commas in a row, or one at an end)',
    );
    const both = await home.nvkectl(["get", "clusters", "a", "-l", "env=prod"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain("error: give cluster names or a --selector, not both");
    const sort = await home.nvkectl(["get", "clusters", "--sort-by", " "]);
    expect(sort.exitCode).toBe(2);
    expect(sort.stderr).toContain('error: --sort-by " " is empty: give a field such as .name');
  });

  it("a release kind's get takes names or a selector, not both, and names the kind (exit 2)", async () => {
    for (const [command, label] of [
      ["machineimages", "MachineImage"],
      ["clusterreleases", "ClusterRelease"],
      ["nodepoolreleases", "NodePoolRelease"],
    ] as const) {
      const both = await home.nvkectl(["get", command, "a", "-l", "env=prod"]);
      expect(both.exitCode).toBe(2);
      expect(both.stderr).toContain(`error: give ${label} names or a --selector, not both\n`);
    }
  });

  it("get providers refuses a provider it does not know before reading the cluster (exit 4)", async () => {
    const result = await home.nvkectl(["get", "providers", "nico", "aws"]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toBe(
      'error: provider "aws" is not known to nvkectl\nwhy: nvkectl knows the providers nico, capd\n',
    );
  });
});

describe("errors read right", () => {
  it("an unknown command names the closest one on a non-TTY stderr, and exits 127", async () => {
    const result = await home.nvkectl(["get", "cluser"]);
    expect(result.exitCode).toBe(127);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      'error: "get cluser" is not a nvkectl command\ndid you mean: nvkectl get cluster\nnext: run nvkectl get --help for the commands of get\n',
    );
    const far = await home.nvkectl(["frobnicate"]);
    expect(far.exitCode).toBe(127);
    expect(far.stderr).toBe(
      'error: "frobnicate" is not a nvkectl command\nnext: run nvkectl --help for the list of commands\n',
    );
    const json = await home.nvkectl(["delet", "cluster", "x", "--json-logs"]);
    expect(JSON.parse(json.stderr)).toMatchObject({
      code: "UNKNOWN_COMMAND",
      exitCode: 127,
      suggestions: ["delete cluster"],
    });
  });

  it("-v prints the final error once: its problems and next steps under it, not again as fields", async () => {
    const path = await file("bad-replicas.yaml", "controlPlaneConfig:\n  replicas: 2\n");
    const result = await home.nvkectl(["create", "cluster", "-f", path, "-v"]);
    expect(result.exitCode).toBe(3);
    const errorLines = result.stderr.split("\n").filter((line) => line.startsWith("error: "));
    expect(errorLines).toEqual([
      `error: ${path} has 6 problems; nothing was sent to the controller code=INPUT_INVALID exitCode=3`,
    ]);
    expect(result.stderr.match(/must be odd/g)).toHaveLength(1);
    expect(result.stderr.match(/fix every problem listed above/g)).toHaveLength(1);
    // A number is quoted back as the number it is
    expect(result.stderr).toContain(`${path}:2: field controlPlaneConfig.replicas: 2 must be odd (1, 3, 5 or 7)`);
  });

  // Issue 26 §1 item 7: oclif's "Missing 1 required arg:" and "Nonexistent flag:" as a user fixes them.
  it("a missing argument is named with what it is and an example; a mistyped flag gets the one meant (exit 2)", async () => {
    const missing = await home.nvkectl(["delete", "cluster"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).not.toContain("Missing 1 required arg");
    expect(missing.stderr).toMatch(/^error: nvkectl delete cluster needs NAME, /);
    expect(missing.stderr).toContain("next: for example: nvkectl delete cluster ");
    const typo = await home.nvkectl(["get", "clusters", "--no-header"]);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toBe(
      "error: nvkectl get clusters has no flag --no-header; did you mean --no-headers?\nnext: nvkectl get clusters --help lists its flags\n",
    );
  });

  it("nvkectl help <command> prints that command's --help; an unknown one exits 127 with the closest", async () => {
    const viaHelp = await home.nvkectl(["help", "get", "clusters"]);
    const viaFlag = await home.nvkectl(["get", "clusters", "--help"]);
    expect(viaHelp.exitCode).toBe(0);
    expect(viaHelp.stdout).toContain("USAGE\n  $ nvkectl get clusters");
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    const unknown = await home.nvkectl(["help", "get", "cluser"]);
    expect(unknown.exitCode).toBe(127);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain('error: "get cluser" is not a nvkectl command');
    expect(unknown.stderr).toContain("nvkectl help get cluster");
  });

  it("a missing required flag is said in one line, without oclif's preamble", async () => {
    const result = await home.nvkectl(["config", "set-site", "lab2", "--url", "http://127.0.0.1:1"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(
      "error: missing required flag --kubeconfig\nnext: run nvkectl --help, or the command with --help, for usage\n",
    );
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
  it("get providers needs no kubectl (issue 27 item 5): with an empty PATH it reads the site's kubeconfig itself", async () => {
    const empty = join(home.path, "empty-bin");
    await mkdir(empty, { recursive: true });
    const result = await home.nvkectl(["get", "providers"], { env: { PATH: empty } });
    // The site's kubeconfig here has no cluster: nvkectl says so itself (exit 3), where it used
    // to stop at "kubectl was not found on PATH" (exit 9) before reading it.
    expect(result.stderr).not.toContain("kubectl");
    expect(result.stderr.split("\n")[0]).toBe(
      `error: kubeconfig ${join(home.path, "site.kubeconfig")} has no current cluster`,
    );
    expect(result.exitCode).toBe(3);
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
