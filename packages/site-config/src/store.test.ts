import { chmod, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { configHome, userErrorOf } from "@nodekit/test-utils";
import { load } from "js-yaml";
import { beforeEach, describe, expect, it } from "vitest";
import { formatConfig, parseConfig } from "./parse.ts";
import { emptyConfig, type SiteConfig } from "./rules.ts";
import { setSite } from "./sites.ts";
import { type ConfigLocation, configPath, loadConfig, saveConfig, updateConfig } from "./store.ts";

let root: string;
let location: ConfigLocation;
let file: string;

beforeEach(async () => {
  ({ root, location, file } = await configHome("site-config-"));
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe("configPath", () => {
  it("prefers NVKECTL_CONFIG, then an absolute XDG_CONFIG_HOME, then ~/.config", () => {
    expect(configPath({ env: { NVKECTL_CONFIG: "conf/n.yaml", XDG_CONFIG_HOME: "/x", HOME: "/h" }, cwd: "/w" })).toBe(
      "/w/conf/n.yaml",
    );
    expect(configPath({ env: { XDG_CONFIG_HOME: "/x", HOME: "/h" } })).toBe("/x/nvkectl/config.yaml");
    expect(configPath({ env: { XDG_CONFIG_HOME: "relative", HOME: "/h" } })).toBe("/h/.config/nvkectl/config.yaml");
    expect(configPath({ env: { HOME: "/h" } })).toBe("/h/.config/nvkectl/config.yaml");
  });
});

describe("loadConfig", () => {
  it("treats a missing file as an empty configuration", async () => {
    expect(await loadConfig(location)).toEqual({ path: file, config: emptyConfig(), exists: false });
  });

  it("reads the YAML earlier versions wrote and a person's hand-edited YAML (anchors, flow style)", async () => {
    await mkdir(join(root, "xdg", "nvkectl"), { recursive: true });
    const kubeconfig = join(root, "lab.kubeconfig");
    const site = { name: "lab", url: "https://lab.example.com", kubeconfig };
    const expected = { apiVersion: "nvkectl.nvke.io/v1", kind: "Config", activeSite: "lab", sites: [site] };
    // What nvkectl wrote before its config file became JSON (js-yaml's dump, a comment first).
    await writeFile(
      file,
      `# nvkectl site configuration; change it with \`nvkectl config\` (see docs/sites.md).\napiVersion: nvkectl.nvke.io/v1\nkind: Config\nactiveSite: lab\nsites:\n  - name: lab\n    url: https://lab.example.com\n    kubeconfig: ${kubeconfig}\n`,
    );
    expect((await loadConfig(location)).config).toEqual(expected);
    await writeFile(
      file,
      `apiVersion: nvkectl.nvke.io/v1\nkind: Config\nactiveSite: &active lab\nsites:\n  - {name: *active, url: "https://lab.example.com", kubeconfig: ${kubeconfig}}\n`,
    );
    expect((await loadConfig(location)).config).toEqual(expected);
    await writeFile(file, JSON.stringify(expected));
    expect((await loadConfig(location)).config).toEqual(expected);
  });

  it("names the line of a problem in the JSON it writes", async () => {
    await mkdir(join(root, "xdg", "nvkectl"), { recursive: true });
    const text = formatConfig(
      setSite(emptyConfig(), { name: "lab", url: "https://lab.example.com", kubeconfig: "/k/lab" }).config,
    );
    await writeFile(file, text.replace('"url": "https://lab.example.com"', '"url": "ftp://lab.example.com"'));
    const error = await userErrorOf(loadConfig(location));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.problems.map((p) => [p.line, p.path])).toEqual([[8, ["sites", 0, "url"]]]);
  });

  it("fails on a corrupt file, naming the file, every problem and what to do", async () => {
    await mkdir(join(root, "xdg", "nvkectl"), { recursive: true });
    await writeFile(file, "apiVersion: nvkectl.nvke.io/v1\nkind: Config\nactiveSite: lab\nsites: []\nextra: 1\n");

    const error = await userErrorOf(loadConfig(location));

    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.exitCode).toBe(ExitCode.InvalidInput);
    expect(error.message).toBe(`${file} has 2 problems; nothing was written`);
    expect(error.problems.map((p) => [p.source, p.line, p.path])).toEqual([
      [file, 3, ["activeSite"]],
      [file, 5, ["extra"]],
    ]);
    expect(error.next[0]).toMatch(/^fix .* or remove it/);
  });
});

describe("saveConfig", () => {
  it("writes JSON (YAML too, so every version reads it), the fields in a fixed order", async () => {
    const { config } = setSite(emptyConfig(), { name: "lab", url: "https://lab.example.com", kubeconfig: "/k/lab" });
    await saveConfig(config, location);

    const text = await readFile(file, "utf8");
    expect(JSON.parse(text)).toEqual(config);
    expect(load(text)).toEqual(config);
    expect(text).toBe(
      '{\n  "apiVersion": "nvkectl.nvke.io/v1",\n  "kind": "Config",\n  "activeSite": "lab",\n  "sites": [\n    {\n      "name": "lab",\n      "url": "https://lab.example.com",\n      "kubeconfig": "/k/lab"\n    }\n  ]\n}\n',
    );
  });

  it("creates the directory 0700 and the file 0600", async () => {
    const path = await saveConfig(emptyConfig(), location);

    expect(path).toBe(file);
    expect(await mode(join(root, "xdg", "nvkectl"))).toBe(0o700);
    expect(await mode(file)).toBe(0o600);
    expect(parseConfig(await readFile(file, "utf8"), { source: file }).config).toEqual(emptyConfig());
  });

  it("narrows an existing file's wider permissions to 0600", async () => {
    await mkdir(join(root, "xdg", "nvkectl"), { recursive: true });
    await writeFile(file, "");
    await chmod(file, 0o644);

    await saveConfig(emptyConfig(), location);

    expect(await mode(file)).toBe(0o600);
  });

  it("refuses to write an invalid configuration", async () => {
    const invalid = { ...emptyConfig(), activeSite: "ghost" };
    expect((await userErrorOf(saveConfig(invalid, location))).code).toBe("CONFIG_INVALID");
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("never leaves a torn file: concurrent writers and readers see whole files only", async () => {
    const configs: SiteConfig[] = Array.from({ length: 25 }, (_, index) => {
      const kubeconfig = `/k/${"x".repeat(index * 40)}.kubeconfig`;
      return setSite(emptyConfig(), { name: `site-${index}`, url: "https://n.example", kubeconfig }).config;
    });
    await saveConfig(configs[0] as SiteConfig, location);

    const reads: Array<SiteConfig | undefined> = [];
    await Promise.all([
      ...configs.map((config) => saveConfig(config, location)),
      ...configs.map(async () => {
        reads.push(parseConfig(await readFile(file, "utf8"), { source: file }).config);
      }),
    ]);

    expect(reads).toHaveLength(configs.length);
    for (const read of reads) expect(configs).toContainEqual(read);
    expect(configs).toContainEqual(parseConfig(await readFile(file, "utf8"), { source: file }).config);
    expect(await readdir(join(root, "xdg", "nvkectl"))).toEqual(["config.yaml"]);
    expect(await mode(file)).toBe(0o600);
  });
});

describe("updateConfig", () => {
  it("never writes over a file that failed to parse", async () => {
    await mkdir(join(root, "xdg", "nvkectl"), { recursive: true });
    const corrupt = Buffer.from("sites: [\n  {name: lab\n# half-edited\n");
    await writeFile(file, corrupt);
    await chmod(file, 0o644);

    const error = await userErrorOf(updateConfig((config) => ({ config }), location));

    expect(error.code).toBe("CONFIG_INVALID");
    expect(await readFile(file)).toEqual(corrupt);
    expect(await mode(file)).toBe(0o644);
  });
});
