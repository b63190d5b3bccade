import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// The launcher (cli-kit's run): global flags anywhere on the line, a topic alone is an
// error, and the fast path (the shipped manifest, no oclif Config.load) answers exactly as
// oclif's full start does, which still runs whenever a user plugin with hooks is installed.

let home: CliHome;
const FULL = { NVKECTL_FULL_START: "1" };
const manifest = JSON.parse(await readFile(join(repoRoot, "apps/nvkectl/oclif.manifest.json"), "utf8")) as {
  commands: Record<string, { id: string; hidden?: boolean }>;
};
const ids = Object.values(manifest.commands)
  .filter((command) => !command.hidden)
  .map((command) => command.id);

beforeAll(async () => {
  home = await cliHome("nvkectl-launcher-", { spawn: true });
});
afterAll(async () => {
  await home.cleanup();
});

describe("global flags are taken anywhere on the line (NV-1), as kubectl takes them", () => {
  // With no site configured, a command that got --site says that site is not configured (exit 4):
  // proof that the flag reached it. Before, flags in front were "not a nvkectl command" (127)
  // and `get --site lab clusters` printed get's help with exit 0.
  const lines = [
    ["--site", "lab", "get", "clusters"],
    ["--site=lab", "get", "clusters"],
    ["get", "--site", "lab", "clusters"],
    ["get", "clusters", "--site", "lab"],
    ["-v", "--site", "lab", "get", "clusters", "-o", "json"],
    ["--json-logs", "get", "--site=lab", "clusters"],
    ["--request-timeout", "5s", "--site", "lab", "get", "cluster"],
  ];
  it.each(lines)("%s …", async (...argv) => {
    for (const env of [{}, FULL]) {
      const result = await home.nvkectl(argv, { env });
      expect(result.exitCode, result.stderr).toBe(4);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/site \\?"lab\\?" is not configured/);
    }
  });

  it("-v given first turns on debug logs", async () => {
    const result = await home.nvkectl(["-v", "--site", "lab", "get", "clusters"]);
    expect(result.stderr).toContain("code=SITE_NOT_FOUND");
  });
});

describe("a topic without a command is a usage error, never help with exit 0", () => {
  it("nvkectl get exits 2 and lists the resource types, once each", async () => {
    for (const env of [{}, FULL]) {
      const result = await home.nvkectl(["get"], { env });
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr.split("\n")[0]).toBe(
        "error: nvkectl get needs one of: clusterreleases, clusters, kubeconfig, machineimages, nodepoolreleases, nodepools, providers",
      );
      expect(result.stderr).toContain("next: see what each does with nvkectl get --help");
    }
  });

  it("so are `nvkectl config`, and `nvkectl create -o json` (a flag but no command)", async () => {
    expect((await home.nvkectl(["config"])).stderr).toContain(
      "error: nvkectl config needs one of: current-site, delete-site, get-sites, set-site, use-site",
    );
    expect((await home.nvkectl(["create", "-o", "json"])).exitCode).toBe(2);
  });

  it("an unknown command still gets the closest one suggested (127), and --help of a topic is help", async () => {
    const unknown = await home.nvkectl(["get", "clusterz"]);
    expect(unknown.exitCode).toBe(127);
    const help = await home.nvkectl(["get", "--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("get clusters          List tenant clusters");
  });
});

describe("help", () => {
  it("the root help lists the global flags", async () => {
    const result = await home.nvkectl(["--help"]);
    expect(result.exitCode).toBe(0);
    const section = result.stdout.slice(result.stdout.indexOf("GLOBAL FLAGS"));
    for (const flag of [
      "-v, --verbose",
      "--json-logs",
      "--site=<value>",
      "--request-timeout=<value>",
      "--certificate-authority=<value>",
    ]) {
      expect(section).toContain(flag);
    }
  });

  it("a topic lists each command once, with its alias beside it", async () => {
    const result = await home.nvkectl(["get", "--help"]);
    const rows = result.stdout.split("\n").filter((line) => /^ {2}get \S/.test(line));
    expect(rows.map((row) => row.trim().split(/\s{2,}/)[0])).toEqual([
      "get clusterreleases",
      "get clusters",
      "get kubeconfig",
      "get machineimages",
      "get nodepoolreleases",
      "get nodepools",
      "get providers",
    ]);
    expect(result.stdout).toContain("(alias: get cluster)");
  });
});

describe("the fast path answers exactly as oclif's full start", () => {
  it("--version", async () => {
    const fast = await home.nvkectl(["--version"]);
    const full = await home.nvkectl(["--version"], { env: FULL });
    expect(fast).toEqual(full);
    expect(fast.stdout).toMatch(/^@nodekit\/nvkectl\/\d+\.\d+\.\d+ \S+ node-v\d+/);
  });

  it("--help of every command", { timeout: 120_000 }, async () => {
    for (const id of ids) {
      const words = id.split(":");
      const [fast, full] = await Promise.all([
        home.nvkectl([...words, "--help"]),
        home.nvkectl([...words, "--help"], { env: FULL }),
      ]);
      expect(fast, id).toEqual(full);
      expect(fast.exitCode, id).toBe(0);
    }
  });
});

describe("with a user plugin installed, oclif starts in full and the plugin's hooks run", () => {
  it("for the plugin's command and for the CLI's own, global flags anywhere", async () => {
    const plugin = await cliHome("nvkectl-plugin-", { spawn: true });
    try {
      const log = join(plugin.path, "hooks.log");
      const env = { XDG_DATA_HOME: join(plugin.path, "data"), HOOKS_LOG: log };
      await appendFile(log, "");
      // A local path, linked: nothing is fetched (an install would ask a registry or GitHub).
      const fixture = join(repoRoot, "apps/nvkectl/test/fixtures/hooks-plugin");
      const linked = await plugin.nvkectl(["plugins", "link", "--no-install", fixture], { env });
      expect(linked.exitCode, linked.stderr).toBe(0);

      const hello = await plugin.nvkectl(["-v", "hello", "--name", "ops"], { env });
      expect(hello.exitCode, hello.stderr).toBe(0);
      expect(hello.stdout).toBe("hello ops (verbose)\n");
      const get = await plugin.nvkectl(["--site", "lab", "get", "clusters"], { env });
      expect(get.exitCode).toBe(4);
      const version = await plugin.nvkectl(["--version"], { env: { ...env, NODEKIT_TRACE_STARTUP: "1" } });
      expect(version.exitCode).toBe(0);
      expect(version.stderr).toMatch(/^startup \S+ planned \(full\)$/m);
      expect((await readFile(log, "utf8")).split("\n").filter(Boolean)).toEqual([
        "init hello",
        "prerun hello",
        "init get:clusters",
        "prerun get:clusters",
        "init --version",
      ]);
    } finally {
      await plugin.cleanup();
    }
  });
});

describe("beside a linked plugin without hooks (issue 27 item 4)", () => {
  // The plugin is an ES module whose command extends cli-kit's BaseCommand from its own
  // @nodekit/cli-kit (the workspace's, not the one nvkectl bundles): two copies of oclif.
  let plugin: CliHome;
  let env: Record<string, string>;
  beforeAll(async () => {
    plugin = await cliHome("nvkectl-quiet-plugin-", { spawn: true });
    env = { XDG_DATA_HOME: join(plugin.path, "data") };
    const fixture = join(repoRoot, "apps/nvkectl/test/fixtures/quiet-plugin");
    const linked = await plugin.nvkectl(["plugins", "link", "--no-install", fixture], { env });
    expect(linked.exitCode, linked.stderr).toBe(0);
  });
  afterAll(async () => {
    await plugin.cleanup();
  });

  it("the CLI's own commands and --version start on the fast path", async () => {
    const trace = { ...env, NODEKIT_TRACE_STARTUP: "1" };
    const get = await plugin.nvkectl(["--site", "lab", "get", "clusters"], { env: trace });
    expect(get.exitCode).toBe(4);
    expect(get.stderr).toMatch(/^startup \S+ planned \(command\)$/m);
    const version = await plugin.nvkectl(["--version"], { env: trace });
    expect(version.stderr).toMatch(/^startup \S+ planned \(version\)$/m);
    expect(version.stdout).toBe((await home.nvkectl(["--version"])).stdout);
    // A topic alone goes to oclif, which knows the plugin's commands too.
    expect((await plugin.nvkectl(["widgets"], { env: trace })).stderr).toMatch(/^startup \S+ planned \(full\)$/m);
  });

  it("the plugin's failure is said once, with its exit code, and no linked-ESM warning on any command", async () => {
    const check = await plugin.nvkectl(["widgets", "check"], { env });
    expect(check.exitCode).toBe(6);
    expect(check.stdout).toBe("");
    expect(check.stderr).toBe(
      "error: the widget service did not answer\nnext: check the site with `nvkectl config current-site`\n",
    );
    for (const argv of [["widgets", "check"], ["get"], ["plugins"]]) {
      const result = await plugin.nvkectl(argv, { env });
      expect(result.stderr, argv.join(" ")).not.toContain("linked ESM module");
    }
  });
});

describe("one launcher body (issue 8 item 5)", () => {
  it("every CLI's bin/run.js is the same lines around cli-kit's launch(), and nvkectl starts through it", async () => {
    const [nvkectl, nr] = await Promise.all(
      ["nvkectl", "nr"].map((cli) => readFile(join(repoRoot, "apps", cli, "bin", "run.js"), "utf8")),
    );
    expect(nr).toBe(nvkectl);
    expect(nvkectl).toContain('const { launch } = require("../dist/launch.js");');
    expect(nvkectl).toContain(
      'launch(require("node:url").pathToFileURL(__filename).href, async () => require("../dist/run.js"));',
    );
    // The bin and the bundle are CommonJS: Node loads them without its ES module loader.
    for (const cli of ["nvkectl", "nr"]) {
      for (const dir of ["bin", "dist"]) {
        const pkg = JSON.parse(await readFile(join(repoRoot, "apps", cli, dir, "package.json"), "utf8"));
        expect(pkg, `apps/${cli}/${dir}/package.json`).toEqual({ type: "commonjs" });
      }
    }
    // Standalone: the engine check runs before any module of the CLI loads (the only chunk
    // dist/launch.js imports is esbuild's runtime helpers, which hold no source module).
    const meta = JSON.parse(await readFile(join(repoRoot, "apps/nvkectl/dist/metafile-esm.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, unknown>; imports: { path: string }[] }>;
    };
    const launch = meta.outputs["dist/launch.js"];
    expect(Object.keys(launch?.inputs ?? {}).sort()).toEqual([
      "../../packages/cli-kit/src/launch/bin.ts",
      "src/launch.ts",
    ]);
    for (const { path } of launch?.imports ?? []) {
      if (path.startsWith("dist/")) expect(Object.keys(meta.outputs[path]?.inputs ?? {}), path).toEqual([]);
    }
  });
});
