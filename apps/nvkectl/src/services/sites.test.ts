import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { type ConfigLocation, loadConfig } from "@nodekit/site-config";
import { tempDir, userErrorOf } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { activateSite, configureSite, currentSite, readSites, removeSite } from "./sites.ts";

let root: string;
let cleanup: () => Promise<void>;
let location: ConfigLocation;
let file: string;

beforeEach(async () => {
  ({ path: root, cleanup } = await tempDir("nvkectl-sites-"));
  location = { env: { HOME: root, XDG_CONFIG_HOME: join(root, "xdg") }, cwd: root };
  file = join(root, "xdg", "nvkectl", "config.yaml");
  await writeFile(join(root, "lab.kubeconfig"), "apiVersion: v1\nkind: Config\n");
});

afterEach(() => cleanup());

describe("the command services", () => {
  it("configureSite stores a relative kubeconfig as an absolute path and activates the first site", async () => {
    const result = await configureSite({
      ...location,
      name: "lab",
      url: "https://lab.example",
      kubeconfig: "lab.kubeconfig",
    });

    expect(result).toEqual({
      path: file,
      site: { name: "lab", url: "https://lab.example", kubeconfig: join(root, "lab.kubeconfig") },
      created: true,
      activated: true,
    });
    expect((await loadConfig(location)).config.activeSite).toBe("lab");
  });

  it("configureSite warns about plain HTTP to a non-loopback address", async () => {
    const result = await configureSite({
      ...location,
      name: "lab",
      url: "http://10.0.0.5:30080",
      kubeconfig: "lab.kubeconfig",
    });
    expect(result.warning).toContain("a bearer token will be sent in clear text to 10.0.0.5:30080");
  });

  it("configureSite writes nothing when the kubeconfig does not exist", async () => {
    const error = await userErrorOf(
      configureSite({ ...location, name: "lab", url: "https://lab.example", kubeconfig: "missing.kubeconfig" }),
    );

    expect(error.code).toBe("KUBECONFIG_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toBe(`kubeconfig ${join(root, "missing.kubeconfig")} does not exist or is not a file`);
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("activateSite, removeSite, readSites and currentSite work on the file", async () => {
    await configureSite({ ...location, name: "lab", url: "https://lab.example", kubeconfig: "lab.kubeconfig" });
    await configureSite({ ...location, name: "edge", url: "https://edge.example", kubeconfig: "lab.kubeconfig" });

    expect((await currentSite(location)).site.name).toBe("lab");
    expect((await currentSite({ ...location, site: "edge" })).site.name).toBe("edge");
    expect((await activateSite({ ...location, name: "edge" })).site.name).toBe("edge");
    expect((await readSites(location)).sites.map((s) => [s.name, s.active])).toEqual([
      ["lab", false],
      ["edge", true],
    ]);
    expect(await removeSite({ ...location, name: "edge" })).toMatchObject({ wasActive: true });
    expect(await readSites(location)).toEqual({
      path: file,
      sites: [expect.objectContaining({ name: "lab", active: false })],
    });
    expect((await userErrorOf(currentSite(location))).code).toBe("NO_ACTIVE_SITE");
  });
});
