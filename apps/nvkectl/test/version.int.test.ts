import { join } from "node:path";
import type { RunningEmulator } from "@nodekit/nvke-emulator";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apply, type CliHome, kubectl } from "./helpers.ts";
import { closedPort, installRecord, type SiteFixture, setSite, siteFixture } from "./site-fixture.ts";

// `nvkectl version` (issue 26 §2): the built CLI against the NVKE controller emulator and a
// real kube-apiserver; the installed release read from the install record on the site.

let site: SiteFixture;
let admin: string;
let emulator: RunningEmulator;
let home: CliHome;

beforeAll(async () => {
  // Its own control plane: the install record in kube-system reaches no other file.
  site = await siteFixture("nvkectl-version-");
  ({ admin, home } = site);
  emulator = await site.emulator();
  await setSite(home, "lab", emulator.url, admin);
}, 120_000);

afterAll(async () => {
  await site?.cleanup();
});

describe("nvkectl version", () => {
  test("client, controller API and site cluster versions; a site without a record says nothing is installed", async () => {
    const server = JSON.parse(await kubectl(admin, ["version", "--output=json"])).serverVersion.gitVersion;
    const result = await home.nvkectl(["version"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      `Client Version: 0.1.0 (Node.js ${process.version}, ${process.platform}/${process.arch})`,
      "Site: lab",
      `Controller API Version: v1 (${emulator.url})`,
      `Site Kubernetes Version: ${server}`,
      "Installed Release: none (the site has no install record)",
      "",
    ]);
  });

  test("-o json names the installed release the install record holds", async () => {
    await apply(admin, installRecord({ release: "1.2.0", chart: "0.4.0" }));
    const result = await home.nvkectl(["version", "-o", "json"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      clientVersion: { nvkectl: "0.1.0" },
      site: "lab",
      controller: { apiVersion: "v1", url: emulator.url },
      siteCluster: { kubernetesVersion: expect.stringMatching(/^v1\.\d+\.\d+/) },
      installed: {
        release: { name: "nvke", version: "1.2.0", digest: `sha256:${"a".repeat(64)}` },
        deployPath: "nico",
        installedAt: "2026-12-03T10:00:00.000Z",
        items: [{ id: "nvke-controller", version: "0.4.0", digest: `sha256:${"b".repeat(64)}` }],
      },
    });
    const table = await home.nvkectl(["version"]);
    expect(table.stdout).toContain(
      `Installed Release: nvke 1.2.0 (sha256:${"a".repeat(64)}), deploy path nico, installed 2026-12-03T10:00:00.000Z`,
    );
  });

  test("a site that does not answer: the client's version is printed, then the error, exit 6", async () => {
    const port = await closedPort();
    const dead = join(home.path, "dead.kubeconfig");
    await kubectl(admin, ["config", "view", "--raw", "--minify", "--flatten", "--output=yaml"]).then(async (text) => {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(dead, text.replace(/server: https:\/\/127\.0\.0\.1:\d+/, `server: https://127.0.0.1:${port}`));
    });
    await setSite(home, "dead", `http://127.0.0.1:${port}`, dead);
    const result = await home.nvkectl(["version", "--site", "dead", "--request-timeout", "5s"]);
    expect(result.exitCode).toBe(6);
    expect(result.stdout).toMatch(/^Client Version: 0\.1\.0 /);
    expect(result.stdout).not.toContain("Site Kubernetes Version");
    expect(result.stderr).toMatch(/refused|reach/i);
    const json = await home.nvkectl(["version", "--site", "dead", "-o", "json"]);
    expect(json.exitCode).toBe(6);
    expect(JSON.parse(json.stdout)).toMatchObject({ clientVersion: { nvkectl: "0.1.0" }, site: "dead" });
    // --client asks nothing
    const client = await home.nvkectl(["version", "--client", "--site", "dead"]);
    expect(client.exitCode, client.stderr).toBe(0);
    expect(client.stdout.trim().split("\n")).toHaveLength(1);
  });
});
