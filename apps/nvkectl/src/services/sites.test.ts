import { stat } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { type ConfigLocation, loadConfig } from "@nodekit/site-config";
import { configHome, userErrorOf } from "@nodekit/test-utils";
import { beforeEach, describe, expect, it } from "vitest";
import { activateSite, configureSite, currentSite, readSites, removeSite } from "./sites.ts";

let root: string;
let location: ConfigLocation;
let file: string;

beforeEach(async () => {
  ({ root, location, file } = await configHome("nvkectl-sites-"));
});

/** configureSite in this test's home, naming lab.kubeconfig unless told another. */
const configure = (name: string, url: string, kubeconfig = "lab.kubeconfig") =>
  configureSite({ ...location, name, url, kubeconfig });

describe("the command services", () => {
  it("configureSite stores a relative kubeconfig as an absolute path and activates the first site", async () => {
    const result = await configure("lab", "https://lab.example");

    expect(result).toEqual({
      path: file,
      site: { name: "lab", url: "https://lab.example", kubeconfig: join(root, "lab.kubeconfig") },
      created: true,
      activated: true,
    });
    expect((await loadConfig(location)).config.activeSite).toBe("lab");
  });

  it("configureSite warns about plain HTTP to a non-loopback address", async () => {
    const result = await configure("lab", "http://10.0.0.5:30080");
    expect(result.warning).toContain("a bearer token will be sent in clear text to 10.0.0.5:30080");
  });

  it("configureSite writes nothing when the kubeconfig does not exist", async () => {
    const error = await userErrorOf(configure("lab", "https://lab.example", "missing.kubeconfig"));

    expect(error.code).toBe("KUBECONFIG_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toBe(`kubeconfig ${join(root, "missing.kubeconfig")} does not exist or is not a file`);
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("activateSite, removeSite, readSites and currentSite work on the file", async () => {
    await configure("lab", "https://lab.example");
    await configure("edge", "https://edge.example");

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
