import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CliResult, runCli, tempDir } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// These run the built CLI: build nvkectl (and the libraries) first.

let home: { path: string; cleanup: () => Promise<void> };
let configFile: string;

beforeEach(async () => {
  home = await tempDir("nvkectl-config-");
  configFile = join(home.path, "xdg", "nvkectl", "config.yaml");
  await writeFile(join(home.path, "lab.kubeconfig"), "apiVersion: v1\nkind: Config\n");
  await writeFile(join(home.path, "edge.kubeconfig"), "apiVersion: v1\nkind: Config\n");
});

afterEach(async () => {
  await home.cleanup();
});

function nvkectl(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return runCli("nvkectl", args, {
    env: { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "xdg"), ...env },
    cwd: home.path,
    ...(input === undefined ? {} : { input }),
  });
}

/** `nvkectl config set-site NAME --url URL --kubeconfig FILE`, then `extra`. */
const setSite = (name: string, url: string, kubeconfig: string, ...extra: string[]) =>
  nvkectl(["config", "set-site", name, "--url", url, "--kubeconfig", kubeconfig, ...extra]);

const mode = async (path: string) => (await stat(path)).mode & 0o777;

async function addLabAndEdge(): Promise<void> {
  expect((await setSite("lab", "http://127.0.0.1:30080", "lab.kubeconfig")).exitCode).toBe(0);
  expect((await setSite("edge", "https://edge.example.com", "edge.kubeconfig")).exitCode).toBe(0);
}

describe("nvkectl config set-site", () => {
  it("adds the first site, makes it active, and writes the file 0600 in a 0700 directory", async () => {
    const result = await setSite("lab", "https://lab.example.com", "lab.kubeconfig");

    expect(result).toEqual({ exitCode: 0, stdout: 'Site "lab" created.\nSwitched to site "lab".\n', stderr: "" });
    expect(await mode(configFile)).toBe(0o600);
    expect(await mode(join(home.path, "xdg", "nvkectl"))).toBe(0o700);
    // Written as JSON (which is YAML too: a hand-edited YAML file still reads), the kubeconfig's path made absolute.
    expect(JSON.parse(await readFile(configFile, "utf8"))).toEqual({
      apiVersion: "nvkectl.nvke.io/v1",
      kind: "Config",
      activeSite: "lab",
      sites: [{ name: "lab", url: "https://lab.example.com", kubeconfig: join(home.path, "lab.kubeconfig") }],
    });
  });

  it("warns on stderr only about plain HTTP to a non-loopback address", async () => {
    const remote = await setSite("lab", "http://10.0.0.5:30080", "lab.kubeconfig");

    expect(remote.exitCode).toBe(0);
    expect(remote.stdout).not.toContain("clear text");
    expect(remote.stderr).toBe(
      "warning: http://10.0.0.5:30080 is plain HTTP: a bearer token will be sent in clear text to 10.0.0.5:30080; " +
        "use it from a trusted network only, or put a TLS endpoint in front of it and name that\n",
    );

    const loopback = await setSite("local", "http://localhost:30080", "lab.kubeconfig");
    expect(loopback).toMatchObject({ exitCode: 0, stderr: "", stdout: 'Site "local" created.\n' });
  });

  it("keeps the active site when adding another, and updates a site in place", async () => {
    await addLabAndEdge();

    const moved = await setSite("edge", "https://edge2.example.com", "edge.kubeconfig");
    expect(moved.stdout).toBe('Site "edge" modified.\n');
    expect((await nvkectl(["config", "current-site"])).stdout).toBe("lab\n");

    const activated = await setSite("edge", "https://edge2.example.com", "edge.kubeconfig", "--activate");
    expect(activated.stdout).toBe('Site "edge" modified.\nSwitched to site "edge".\n');
    const sites = JSON.parse((await nvkectl(["config", "get-sites", "-o", "json"])).stdout).items;
    expect(sites).toEqual([
      { name: "lab", url: "http://127.0.0.1:30080", kubeconfig: join(home.path, "lab.kubeconfig"), active: false },
      { name: "edge", url: "https://edge2.example.com", kubeconfig: join(home.path, "edge.kubeconfig"), active: true },
    ]);
  });

  it("fails with exit 4 and writes nothing when the kubeconfig does not exist", async () => {
    const result = await setSite("lab", "https://lab.example.com", "nope.kubeconfig");

    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`error: kubeconfig ${join(home.path, "nope.kubeconfig")} does not exist`);
    expect(result.stderr).toContain("next: pass the site cluster's kubeconfig with --kubeconfig");
    await expect(stat(configFile)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("fails with exit 3 for an invalid name or URL, listing both", async () => {
    const result = await setSite("Lab_1", "ftp://lab", "lab.kubeconfig");

    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('site "Lab_1": field name: "Lab_1" must be a DNS-1123 label');
    expect(result.stderr).toContain('site "Lab_1": field url: "ftp://lab" must be an http:// or https:// URL');
  });

  it("fails with exit 2 when a required flag is missing", async () => {
    const result = await nvkectl(["config", "set-site", "lab", "--url", "https://lab.example.com"]);

    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("error: missing required flag --kubeconfig\n");
  });

  it("narrows an existing file's permissions to 0600", async () => {
    await addLabAndEdge();
    await chmod(configFile, 0o644);

    await nvkectl(["config", "use-site", "edge"]);

    expect(await mode(configFile)).toBe(0o600);
  });
});

describe("nvkectl config get-sites", () => {
  it("prints a table with the active site starred", async () => {
    await addLabAndEdge();

    const result = await nvkectl(["config", "get-sites"]);

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout.replaceAll(home.path, "~")).toMatchInlineSnapshot(`
      "CURRENT   NAME   URL                        KUBECONFIG
      *         lab    http://127.0.0.1:30080     ~/lab.kubeconfig
                edge   https://edge.example.com   ~/edge.kubeconfig
      "
    `);
  });

  it("prints json and yaml with an active field", async () => {
    await addLabAndEdge();

    const json = await nvkectl(["config", "get-sites", "-o", "json"]);
    // A kubectl-style List, as kubectl prints a list
    expect(JSON.parse(json.stdout)).toMatchObject({
      apiVersion: "v1",
      kind: "List",
      metadata: { resourceVersion: "" },
    });
    expect(JSON.parse(json.stdout).items.map((s: { name: string; active: boolean }) => [s.name, s.active])).toEqual([
      ["lab", true],
      ["edge", false],
    ]);

    const yaml = await nvkectl(["config", "get-sites", "-o", "yaml"]);
    expect(yaml.stdout).toContain("kind: List\n");
    expect(yaml.stdout).toContain("  - name: lab\n    url: http://127.0.0.1:30080\n");
    expect(yaml.stdout).toContain("    active: true\n");
  });

  it("with no config file: an empty table says so on stderr, json prints an empty List", async () => {
    const table = await nvkectl(["config", "get-sites"]);
    expect(table).toMatchObject({ exitCode: 0, stdout: "" });
    expect(table.stderr).toContain("No sites configured");

    const json = await nvkectl(["config", "get-sites", "-o", "json"]);
    expect(JSON.parse(json.stdout).items).toEqual([]);
    await expect(stat(configFile)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("nvkectl config use-site, current-site and --site", () => {
  it("switches the active site", async () => {
    await addLabAndEdge();

    expect(await nvkectl(["config", "use-site", "edge"])).toEqual({
      exitCode: 0,
      stdout: 'Switched to site "edge".\n',
      stderr: "",
    });
    expect((await nvkectl(["config", "current-site"])).stdout).toBe("edge\n");
  });

  it("--site and NVKECTL_SITE override the active site for one invocation only", async () => {
    await addLabAndEdge();

    expect((await nvkectl(["config", "current-site", "--site", "edge"])).stdout).toBe("edge\n");
    expect((await nvkectl(["config", "current-site"], { NVKECTL_SITE: "edge" })).stdout).toBe("edge\n");
    expect((await nvkectl(["config", "current-site"])).stdout).toBe("lab\n");
  });

  it("fails with exit 4 for an unknown site, naming the known ones", async () => {
    await addLabAndEdge();

    const use = await nvkectl(["config", "use-site", "prod"]);
    expect(use.exitCode).toBe(4);
    expect(use.stdout).toBe("");
    expect(use.stderr).toContain('error: site "prod" is not configured\nwhy: the configured sites are lab, edge\n');

    const override = await nvkectl(["config", "current-site", "--site", "prod"]);
    expect(override.exitCode).toBe(4);
    expect(override.stderr).toContain('site "prod" is not configured');
  });

  it("takes arguments from argv only: piped input is never read as a missing argument", async () => {
    await addLabAndEdge();

    // oclif alone would read "edge" from stdin as the site name and switch to it.
    const piped = await nvkectl(["config", "use-site"], {}, "edge\n");
    expect(piped.exitCode).toBe(2);
    expect(piped.stderr).toContain(
      "error: nvkectl config use-site needs NAME, a configured site (see config get-sites)\n",
    );
    expect((await nvkectl(["config", "current-site"], {}, "edge\n")).stdout).toBe("lab\n");
  });

  it("tells the user how to add a site when none is configured", async () => {
    const result = await nvkectl(["config", "current-site"]);

    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("error: no site is active");
    expect(result.stderr).toContain("nvkectl config set-site NAME --url URL --kubeconfig FILE");
  });
});

describe("nvkectl config delete-site", () => {
  it("deletes a site; deleting the active one warns on stderr that none is active", async () => {
    await addLabAndEdge();

    const other = await nvkectl(["config", "delete-site", "edge"]);
    expect(other).toEqual({ exitCode: 0, stdout: `Deleted site "edge" from ${configFile}.\n`, stderr: "" });

    const active = await nvkectl(["config", "delete-site", "lab"]);
    expect(active.exitCode).toBe(0);
    expect(active.stdout).toBe(`Deleted site "lab" from ${configFile}.\n`);
    expect(active.stderr).toContain('warning: "lab" was the active site; no site is active now');

    expect((await nvkectl(["config", "current-site"])).exitCode).toBe(4);
    expect(JSON.parse((await nvkectl(["config", "get-sites", "-o", "json"])).stdout).items).toEqual([]);
  });

  it("fails with exit 4 for an unknown site", async () => {
    expect((await nvkectl(["config", "delete-site", "lab"])).exitCode).toBe(4);
  });
});

describe("a corrupt config file", () => {
  const corrupt = "apiVersion: nvkectl.nvke.io/v1\nkind: Config\nsites:\n  - name: lab\n    url: [oops\n";

  beforeEach(async () => {
    await mkdir(join(home.path, "xdg", "nvkectl"), { recursive: true });
    await writeFile(configFile, corrupt);
    await chmod(configFile, 0o644);
  });

  it("fails every command with exit 3, naming the file and the problem, and is never written over", async () => {
    for (const args of [
      ["config", "get-sites"],
      ["config", "current-site"],
      ["config", "use-site", "lab"],
      ["config", "delete-site", "lab"],
      ["config", "set-site", "lab", "--url", "https://lab.example.com", "--kubeconfig", "lab.kubeconfig"],
    ]) {
      const result = await nvkectl(args);
      expect(result.exitCode, args.join(" ")).toBe(3);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`error: ${configFile} has 1 problem; nothing was written`);
      expect(result.stderr).toMatch(new RegExp(`${configFile}:\\d+: .*is not valid YAML`));
      expect(result.stderr).toContain(`next: fix ${configFile}, or remove it`);
    }
    expect(await readFile(configFile, "utf8")).toBe(corrupt);
    expect(await mode(configFile)).toBe(0o644);
  });

  it("reports schema problems with their lines", async () => {
    await writeFile(
      configFile,
      "apiVersion: nvkectl.nvke.io/v1\nkind: Config\nactiveSite: lab\nsites: []\ncolour: blue\n",
    );

    const result = await nvkectl(["config", "get-sites"]);

    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`${configFile}:3: field activeSite: "lab" names a site, but no site is configured`);
    expect(result.stderr).toContain(`${configFile}:5: field colour: is not a known field`);
  });
});

describe("--json-logs and NVKECTL_CONFIG", () => {
  it("makes every stderr line a JSON object, for warnings and errors alike", async () => {
    const warned = await setSite("lab", "http://10.0.0.5:30080", "lab.kubeconfig", "--json-logs");
    const failed = await nvkectl(["config", "use-site", "prod", "--json-logs"]);

    expect(warned.exitCode).toBe(0);
    expect(failed.exitCode).toBe(4);
    const records = [warned, failed].flatMap((result) =>
      result.stderr
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line)),
    );
    expect(records.map((record) => [record.level, record.code])).toEqual([
      ["warn", undefined],
      ["error", "SITE_NOT_FOUND"],
    ]);
    expect(records[0].msg).toContain("a bearer token will be sent in clear text");
    expect(warned.stdout).toBe('Site "lab" created.\nSwitched to site "lab".\n');
  });

  it("NVKECTL_CONFIG names the config file", async () => {
    const env = { NVKECTL_CONFIG: "elsewhere/sites.yaml" };

    await nvkectl(
      ["config", "set-site", "lab", "--url", "https://lab.example.com", "--kubeconfig", "lab.kubeconfig"],
      env,
    );

    expect(await mode(join(home.path, "elsewhere", "sites.yaml"))).toBe(0o600);
    await expect(stat(configFile)).rejects.toMatchObject({ code: "ENOENT" });
    expect((await nvkectl(["config", "current-site"], env)).stdout).toBe("lab\n");
  });
});
