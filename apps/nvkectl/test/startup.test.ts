import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// The start-up guard (issue 10, lever 4): what the hot paths load is checked, module by
// module, so that an import that slows them fails here rather than in a benchmark. The
// speed itself is measured in tooling/bench, never asserted in a test.
//
// A Node.js --import hook records every module the built CLI resolves and, at exit, the
// internal modules Node loaded; the bundle's metafile says which source modules each chunk holds.

const distDir = join(repoRoot, "apps/nvkectl/dist");
/** How many damaged code caches the fault test runs the CLI with (a process each). */
const DAMAGED_RUNS = 24;
let home: CliHome;
let server: Server;
let hook: string;

beforeAll(async () => {
  home = await cliHome("nvkectl-startup-", { spawn: true });
  server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"items":[]}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = join(home.path, "site.kubeconfig");
  await writeFile(kubeconfig, "apiVersion: v1\nkind: Config\n");
  expect((await home.nvkectl(["config", "set-site", "lab", "--url", url, "--kubeconfig", kubeconfig])).exitCode).toBe(
    0,
  );
  // A cached "auth off" answer: the read is the cached-token case, with no site cluster to ask.
  await mkdir(join(home.tokenCacheDir, "lab"), { recursive: true, mode: 0o700 });
  const now = Date.now();
  await writeFile(
    join(home.tokenCacheDir, "lab", "nke-clients_nke-client.json"),
    JSON.stringify({
      version: 1,
      site: "lab",
      source: `file:${kubeconfig}`,
      serviceAccount: { namespace: "nke-clients", name: "nke-client" },
      state: {
        auth: "off",
        checkedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 3_600_000).toISOString(),
      },
    }),
    { mode: 0o600 },
  );
  // CommonJS, loaded with --require: an ES module here would start the ES module loader itself.
  hook = join(home.path, "record-loads.cjs");
  await writeFile(
    hook,
    `const { appendFileSync } = require("node:fs");
const { registerHooks } = require("node:module");
const log = process.env.LOADS_LOG;
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    appendFileSync(log, result.url + "\\n");
    return result;
  },
});
process.on("exit", () => appendFileSync(log, process.moduleLoadList.map((m) => "internal " + m).join("\\n") + "\\n"));
`,
  );
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await home.cleanup();
});

interface Loads {
  /** Source modules of the chunks loaded, by package: "@oclif/core", "js-yaml", "@nodekit/cli-kit", … */
  packages: string[];
  /** The source modules themselves, relative to the checkout. */
  sources: string[];
  /** Node's internal modules loaded (NativeModule …). */
  internal: string[];
  files: string[];
}

async function loadsOf(argv: string[], env: Record<string, string> = {}): Promise<Loads> {
  const log = join(home.path, `loads-${argv.join("-")}.log`);
  await writeFile(log, "");
  const result = await home.nvkectl(argv, { env: { ...env, NODE_OPTIONS: `--require=${hook}`, LOADS_LOG: log } });
  expect(result.exitCode, result.stderr).toBe(0);
  const lines = (await readFile(log, "utf8")).split("\n").filter(Boolean);
  const files = [...new Set(lines.filter((line) => line.startsWith("file:")).map((url) => fileURLToPath(url)))];
  const meta = JSON.parse(await readFile(join(distDir, "metafile-esm.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  const packages = new Set<string>();
  const sources = new Set<string>();
  for (const file of files) {
    const output = meta.outputs[relative(join(repoRoot, "apps/nvkectl"), file)];
    const inputs = output === undefined ? [relative(repoRoot, file)] : Object.keys(output.inputs);
    for (const input of inputs) {
      packages.add(packageOf(input));
      sources.add(relative(repoRoot, join(repoRoot, "apps/nvkectl", input)));
    }
  }
  return {
    packages: [...packages].sort(),
    sources: [...sources].sort(),
    internal: lines.filter((line) => line.startsWith("internal ")).map((line) => line.slice("internal ".length)),
    files,
  };
}

/** The package a source module belongs to: an npm package's name, a workspace package, or the app. */
function packageOf(input: string): string {
  // The loader of oclif's heavy half (tooling/tsup/lazy-requires.ts) is part of how oclif is bundled.
  if (input.startsWith("nodekit-oclif:")) return "@oclif/core";
  const npm = input.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/);
  if (npm?.[1]) return npm[1];
  const workspace = input.match(/packages\/([^/]+)\//);
  if (workspace?.[1]) return `@nodekit/${workspace[1]}`;
  return input.startsWith("src/") || input.startsWith("apps/nvkectl/") ? "@nodekit/nvkectl" : input;
}

/** What @oclif/core brings into the bundle (its command class needs its parser, help and ux). */
const OCLIF_CORE_DEPENDENCIES = [
  "ansi-escapes",
  "ansi-regex",
  "ansi-styles",
  "ansis",
  "balanced-match",
  "brace-expansion",
  "clean-stack",
  "cli-spinners",
  "color-convert",
  "color-name",
  "debug",
  "ejs",
  "emoji-regex",
  "escape-string-regexp",
  "fdir",
  "get-package-type",
  "has-flag",
  "indent-string",
  "is-fullwidth-code-point",
  "lilconfig",
  "minimatch",
  "ms",
  "picomatch",
  "string-width",
  "strip-ansi",
  "supports-color",
  "tinyglobby",
  "widest-line",
  "wordwrap",
  "wrap-ansi",
];

describe("what the hot paths load", () => {
  it("--version loads the launcher and nothing of oclif", async () => {
    const { packages, files } = await loadsOf(["--version"]);
    // Not even @nodekit/errors: run.ts writes its one exit status out (each module is a file to load).
    // And not cli-kit's whole index: the bundle imports each name from the file that defines it
    // (tooling/tsup/past-indexes.ts); through the index, --version loaded oclif's command class.
    expect(packages).toEqual(["@nodekit/cli-kit", "@nodekit/nvkectl"]);
    expect(files.map((file) => relative(repoRoot, file)).every((file) => file.startsWith("apps/nvkectl/"))).toBe(true);
  });

  it("get clusters -o json with a cached token: no ky, undici, execa, client-node, zod or API schemas; exactly these packages", async () => {
    const { packages, internal, files, sources } = await loadsOf(["get", "clusters", "-o", "json"]);
    for (const slow of [
      "ky",
      "execa",
      "@kubernetes/client-node",
      "write-file-atomic",
      "log-update",
      "js-yaml",
      "zod",
    ]) {
      expect(packages, slow).not.toContain(slow);
    }
    // The controller's answer is checked by the code generated from its zod schemas
    // (nvke-api/src/answers.generated.ts): building the ~150 schemas costs more than the request.
    expect(sources).toContain("packages/nvke-api/src/answers.generated.ts");
    expect(sources).not.toContain("packages/nvke-api/src/schemas.ts");
    // So are the site config and the token cache file (issue 25): no zod at all on a read.
    expect(sources).toContain("packages/site-config/src/config.generated.ts");
    expect(sources).toContain("packages/k8s-auth/src/cache.generated.ts");
    expect(sources).not.toContain("packages/site-config/src/schema.ts");
    expect(sources).not.toContain("packages/k8s-auth/src/cache-schema.ts");
    // Node's fetch (undici) is ≈ 30 ms a short-lived process never needs; node:http taken
    // with process.getBuiltinModule does not load it, `import "node:http"` does.
    expect(internal.filter((m) => m.includes("undici"))).toEqual([]);
    // oclif's modules are bundled but evaluated on first use (tooling/tsup/lazy-requires.ts):
    // its plugin loader, shell detection and stdin reader never run on the fast path, so the
    // built-ins only they need stay unloaded (child_process: util/os.js; readline: the
    // parser's stdin read). The global `performance` (perf_hooks, eleven modules) and an ES
    // import of node:util (its namespace loads worker_threads) are not on the path either.
    // The bin and the bundle are CommonJS (tooling/tsup/hot-chunk.ts): Node's ES module loader
    // (its module jobs, its translators, import.meta) never starts.
    for (const unused of [
      "internal/modules/esm/module_job",
      "internal/modules/esm/translators",
      "child_process",
      "readline",
      "perf_hooks",
      "worker_threads",
      "internal/util/parse_args/parse_args",
    ]) {
      expect(internal, unused).not.toContain(`NativeModule ${unused}`);
    }
    // A new package here slows every read: add it only with a benchmark that says it is worth it.
    expect(packages.filter((name) => !OCLIF_CORE_DEPENDENCIES.includes(name))).toEqual([
      "@nodekit/cli-kit",
      "@nodekit/documents",
      "@nodekit/errors",
      // The site config and the token cache are read only when no other user could have changed
      // them (issue 9): a few lstat calls, node built-ins only (node:crypto loads on a write).
      "@nodekit/fs-safe",
      // The one HTTP layer (issue 25): request() on node:http, no fetch, no undici.
      "@nodekit/http",
      "@nodekit/k8s-auth",
      "@nodekit/kube",
      // @nodekit/kube's call builders, kubeconfig check and error table, split out (issue 27) so
      // deploy-path and site-config install no client library: the same code, another name.
      "@nodekit/kube-calls",
      "@nodekit/nvke-api",
      "@nodekit/nvkectl",
      "@nodekit/plan",
      "@nodekit/process",
      "@nodekit/site-config",
      "@oclif/core",
    ]);
    // None of what oclif's core depends on: the plugin loader (minimatch, picomatch, tinyglobby,
    // lilconfig), the help renderer (ejs), the spinners, debug are in dist/oclif-heavy.js's half
    // of the bundle, which a read does not load (≈ 580 KB of the ≈ 1 MB it loaded before).
    expect(packages.filter((name) => OCLIF_CORE_DEPENDENCIES.includes(name))).toEqual([]);
    expect(files.map((file) => relative(distDir, file))).not.toContain("oclif-heavy.js");
    // Six files of the CLI's own, not 38: the chunks the read reaches are one file after the
    // build (tooling/tsup/hot-chunk.ts), and each file is a resolve, a read and a link more.
    // launch-imports is esbuild's runtime helpers, kept apart so the engine check loads nothing else.
    expect(
      files
        .map((file) => relative(join(distDir, ".."), file))
        .map((file) => file.replace(/-[\w-]{8}\.js$/, ".js"))
        .sort(),
    ).toEqual([
      "bin/run.js",
      "dist/commands/get/clusters.js",
      "dist/hot.js",
      "dist/launch-imports.js",
      "dist/launch.js",
      "dist/run-imports.js",
      "dist/run.js",
    ]);
  });

  it("--help and a command's --help print the page made at build time: the launcher and nothing of oclif", async () => {
    // tooling/tsup/help-pages.ts; apps/nvkectl/test/help-pages.test.ts compares the pages with oclif's rendering.
    for (const argv of [["--help"], ["get", "clusters", "--help"]]) {
      const { packages, files } = await loadsOf(argv);
      expect(packages, argv.join(" ")).toEqual(["@nodekit/cli-kit", "@nodekit/nvkectl"]);
      expect(
        files
          .map((file) => relative(join(distDir, ".."), file))
          .map((file) => file.replace(/-[\w-]{8}\.js$/, ".js"))
          .sort(),
        argv.join(" "),
      ).toEqual(["bin/run.js", "dist/launch.js", "dist/run-imports.js", "dist/run.js"]);
    }
  });

  it("the full start, a plugin command and --help reach oclif's heavy half when they need it", async () => {
    // Help oclif renders (another width than the pages'): its help renderer and ejs.
    const help = await loadsOf(["--help"], { OCLIF_COLUMNS: "120" });
    expect(help.packages).toContain("ejs");
    const full = await home.nvkectl(["get", "clusters", "-o", "json"], { env: { NVKECTL_FULL_START: "1" } });
    expect(full.exitCode, full.stderr).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ kind: "List", items: [] });
    const plugins = await home.nvkectl(["plugins"]);
    expect(plugins.exitCode, plugins.stderr).toBe(0);
    expect(plugins.stdout).toContain("No plugins installed");
  });

  it("the bundle imports no Node.js built-in as an ES module (each would build the module's ES facade)", async () => {
    const { readdir } = await import("node:fs/promises");
    const { builtinModules } = await import("node:module");
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    const left: string[] = [];
    for (const entry of await readdir(distDir, { recursive: true })) {
      if (!entry.endsWith(".js")) continue;
      const code = await readFile(join(distDir, entry), "utf8");
      // esbuild writes double quotes, rollup (the hot chunk's merge) single ones.
      for (const match of code.matchAll(/^(?:import|export)[\s{*][^;"']*?(?:from\s*)?["']([^"']+)["'];$/gm)) {
        if (builtins.has(match[1] ?? "")) left.push(`${entry}: ${match[0]}`);
      }
    }
    expect(left).toEqual([]);
  });

  it("a command's second start is compiled with the code cache its first wrote after it ran (0600, the user's cache dir)", async () => {
    const { readdir, stat } = await import("node:fs/promises");
    const states = [];
    for (let run = 0; run < 3; run++) {
      const result = await home.nvkectl(["config", "current-site"], { env: { NODEKIT_TRACE_STARTUP: "1" } });
      expect(result.exitCode, result.stderr).toBe(0);
      states.push(result.stderr.match(/hot file loaded \(code cache: (\w+)\)/)?.[1]);
    }
    expect(states).toEqual(["none", "accepted", "accepted"]);
    const dir = join(home.path, "cache", "nvkectl", "code-cache");
    const [cache] = (await readdir(dir)).filter((file) => file.endsWith(".config_current-site.bin"));
    expect(cache).toMatch(new RegExp(`^hot-[\\w-]{8}\\.${process.version.replace(/\./g, "\\.")}-${process.arch}\\.`));
    expect((await stat(join(dir, cache ?? ""))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  // Issue 22 item 7: a damaged code cache crashed the command (SIGSEGV, SIGTRAP, abort) in 45
  // of 210 tries, and was never written again. Now every damage is found before V8 reads it.
  it(`survives ${DAMAGED_RUNS} damaged code caches of a real command: every run succeeds, and the next is compiled with a good cache`, async () => {
    const { readdir } = await import("node:fs/promises");
    const trace = { env: { NODEKIT_TRACE_STARTUP: "1" } };
    const read = () => home.nvkectl(["config", "current-site"], trace);
    const state = (stderr: string) => stderr.match(/hot file loaded \(code cache: (\w+)\)/)?.[1];
    expect((await read()).exitCode).toBe(0);
    const dir = join(home.path, "cache", "nvkectl", "code-cache");
    const [name] = (await readdir(dir)).filter((file) => file.endsWith(".config_current-site.bin"));
    const file = join(dir, name ?? "");
    let seed = 22;
    const random = () => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return seed / 2 ** 32;
    };
    const outcomes: string[] = [];
    for (let round = 0; round < DAMAGED_RUNS; round++) {
      const good = await readFile(file);
      const bad = Buffer.from(good);
      const kind = round % 4;
      if (kind === 0) {
        // A few bytes flipped past the header: inside V8's own header and the code.
        for (let flip = 0; flip < 4; flip++) {
          const at = 24 + Math.floor(random() * (bad.length - 24));
          bad[at] = (bad[at] ?? 0) ^ (1 + Math.floor(random() * 255));
        }
      } else if (kind === 1) {
        bad.fill(0, 24 + Math.floor(random() * (bad.length - 24)));
      } else if (kind === 2) {
        for (let at = 24 + Math.floor(random() * 4096); at < bad.length; at += 97) bad[at] = Math.floor(random() * 256);
      } else {
        await writeFile(file, good.subarray(0, Math.floor(random() * good.length)));
      }
      if (kind !== 3) await writeFile(file, bad);
      const result = await read();
      outcomes.push(`${result.exitCode}:${state(result.stderr)}`);
      expect(result.exitCode, `damage ${round}: ${result.stderr.slice(-400)}`).toBe(0);
      expect(result.stdout).toBe("lab\n");
    }
    expect(new Set(outcomes)).toEqual(new Set(["0:dropped"]));
    const after = await read();
    expect(state(after.stderr)).toBe("accepted");
  }, 180_000);
});
