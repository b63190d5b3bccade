import { testdir } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { planCommand, planEarly } from "./plan.ts";
import { type ManifestCommand, readShippedCli, readShippedPackage } from "./shipped.ts";

// The launcher's plan beside user and linked plugins: one that declares no hook around
// commands leaves the CLI's own commands (and --version) on the fast path; one with an init
// or prerun hook, or one that adds commands where the CLI has its own, takes oclif's full start.

const clusters: ManifestCommand = {
  id: "get:clusters",
  pluginName: "demo",
  pluginType: "core",
  relativePath: ["dist", "commands", "get", "clusters.js"],
  flags: { output: { name: "output", char: "o", type: "option" } },
};

/** A shipped CLI named demo, its data dir (XDG_DATA_HOME/demo) listing `plugins`, and their directories. */
async function world(plugins: Record<string, { pjson: object; files?: Record<string, string> }>) {
  const tree: Record<string, string> = {
    "cli/package.json": JSON.stringify({ name: "demo", version: "1.0.0", oclif: { bin: "demo", topicSeparator: " " } }),
    "cli/oclif.manifest.json": JSON.stringify({ version: "1.0.0", commands: { "get:clusters": clusters } }),
  };
  const listed: object[] = [];
  for (const [name, plugin] of Object.entries(plugins)) {
    tree[`src/${name}/package.json`] = JSON.stringify({ name, version: "1.0.0", ...plugin.pjson });
    for (const [path, content] of Object.entries(plugin.files ?? {})) tree[`src/${name}/${path}`] = content;
    listed.push({ type: "link", name, root: `ROOT/src/${name}` });
  }
  tree["data/demo/package.json"] = JSON.stringify({ private: true, oclif: { schema: 1, plugins: listed } });
  const dir = await testdir(tree);
  await dir.write({
    "data/demo/package.json": (await dir.read("data/demo/package.json")).replaceAll("ROOT", dir.root),
  });
  const pkg = readShippedPackage(dir.path("cli"));
  if (pkg === undefined) throw new Error("no package.json");
  const env = { XDG_DATA_HOME: dir.path("data") };
  const plan = (argv: string[]) => {
    const early = planEarly(pkg, argv, env);
    if (early.kind !== "manifest") return early;
    const cli = readShippedCli(dir.path("cli"), pkg);
    if (cli === undefined) throw new Error("no manifest");
    return planCommand(cli, argv, early.plugins);
  };
  return { dir, plan };
}

const quiet = {
  pjson: { type: "module", oclif: { commands: "./commands", hooks: { "plugins:preinstall": "./x.js" } } },
  files: { "commands/hello.js": "export default class {}" },
};

describe("the plan beside plugins", () => {
  it("a plugin without hooks: --version and the CLI's own commands start fast", async () => {
    const { plan } = await world({ quiet });
    expect(plan(["--version"]).kind).toBe("version");
    expect(plan(["get", "clusters", "-o", "json"]).kind).toBe("command");
    expect(plan(["get", "clusters", "--help"]).kind).toBe("help");
    // The plugin's command, and a topic it may add to, are oclif's.
    expect(plan(["hello"])).toEqual({ kind: "full", reason: "no command of the CLI's own" });
    expect(plan(["get"]).kind).toBe("full");
  });

  it("without plugins a topic alone is the launcher's usage error", async () => {
    const { plan } = await world({});
    expect(plan(["get"]).kind).toBe("topic");
  });

  it("a plugin with an init or prerun hook: everything starts through oclif, so the hooks run", async () => {
    for (const hook of ["init", "prerun", "preparse", "postrun", "finally"]) {
      const { plan } = await world({ quiet, loud: { pjson: { oclif: { hooks: { [hook]: "./hook.js" } } } } });
      expect(plan(["--version"]), hook).toEqual({ kind: "full", reason: `plugin loud hooks: ${hook}` });
      expect(plan(["get", "clusters"]).kind, hook).toBe("full");
    }
  });

  it("a plugin with commands under one of the CLI's own takes oclif's start for that one", async () => {
    const { plan } = await world({
      deeper: { pjson: { oclif: { commands: "./lib" } }, files: { "lib/get/clusters/extra.js": "" } },
    });
    expect(plan(["get", "clusters", "extra"])).toEqual({ kind: "full", reason: "a plugin has commands under it" });
    expect(plan(["get", "clusters", "--help"]).kind).toBe("full");
    expect(plan(["--version"]).kind).toBe("version");
  });

  it("what it cannot read, or plugins of a plugin, or commands not in a directory: oclif's start", async () => {
    const cases = {
      missing: { pjson: {} },
      nested: { pjson: { oclif: { plugins: ["@oclif/plugin-help"] } } },
      explicit: { pjson: { oclif: { commands: { strategy: "explicit", target: "./index.js" } } } },
    };
    for (const [name, plugin] of Object.entries(cases)) {
      const { dir, plan } = await world({ [name]: plugin });
      if (name === "missing") await dir.write({ [`src/${name}/package.json`]: "{" });
      expect(plan(["get", "clusters"]).kind, name).toBe("full");
    }
  });
});
