import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { RunningEmulator } from "@nodekit/nvke-emulator";
import { repoRoot } from "@nodekit/test-utils";
import { dump, load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, kubectl } from "./helpers.ts";
import { closedPort, installRecord, type SiteFixture, setSite, siteFixture } from "./site-fixture.ts";

// `nvkectl support-bundle` (issue 26 §2) against the real kube-apiserver tier and the NVKE
// controller emulator with auth on: distinct canary strings in every secret input (the NICo
// key Secrets, another Secret of a stack namespace, a multi-line one, a kubeconfig user's
// token, the environment, and the controller token the command mints itself), none of which
// may appear anywhere in the archive's decompressed bytes, nor on stdout or stderr.

const AUDIENCE = "nvke-controller-bundle";
const CANARY = {
  nicoKey: "canary-nico-key-4b1d9e7f20c3",
  other: "canary-other-secret-8e2a61d0",
  line: "canaryLineTokenQ2x7Zr9Kp4Vw1Ym",
  kubeToken: "canary-kubeconfig-token-5f3c09ab",
  env: "canary-env-registry-password-71d2",
  field: "canaryFieldValue93",
} as const;

let site: SiteFixture;
let admin: string;
let siteKubeconfig: string;
let emulator: RunningEmulator;
let home: CliHome;

const secret = (namespace: string, name: string, stringData: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { namespace, name },
  type: "Opaque",
  stringData,
});

/** The archive's entries (tar -tzf) and its whole decompressed bytes, as text. */
async function openBundle(path: string) {
  const bytes = await readFile(path);
  const listing = await new Promise<string[]>((resolve, reject) => {
    import("node:child_process").then(({ execFile }) =>
      execFile("tar", ["-tzf", path], (error, stdout) => (error ? reject(error) : resolve(stdout.trim().split("\n")))),
    );
  });
  return { listing, text: gunzipSync(bytes).toString("utf8") };
}

/** One file of the archive, parsed. */
async function entry(path: string, file: string): Promise<unknown> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve, reject) =>
    execFile("tar", ["-xzOf", path, "--wildcards", `*/${file}`], (error, stdout) =>
      error ? reject(error) : resolve(JSON.parse(stdout)),
    ),
  );
}

beforeAll(async () => {
  // Its own control plane: the install record in kube-system and the fixed namespaces reach no other file.
  const multiLine = dump({ apiVersion: "v1", kind: "Config", users: [{ name: "x", user: { token: CANARY.line } }] });
  site = await siteFixture("nvkectl-bundle-", {
    audience: AUDIENCE,
    objects: [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "nico-system" } },
      secret("nke-controller", "nvke-nico-credentials", { apiKey: CANARY.nicoKey }),
      secret("nico-system", "nico-credentials", { apiKey: CANARY.nicoKey }),
      secret("nke-controller", "other", { password: CANARY.other, "site.kubeconfig": multiLine }),
      {
        // A Deployment that carries the key in plain sight, and a credential-looking annotation no Secret holds.
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: {
          namespace: "nke-controller",
          name: "nvke-controller",
          annotations: { "example.net/password": CANARY.field },
        },
        spec: {
          selector: { matchLabels: { app: "nvke-controller" } },
          template: {
            metadata: { labels: { app: "nvke-controller" } },
            spec: {
              containers: [
                {
                  name: "controller",
                  image: "nvke/controller:0.9.0",
                  env: [{ name: "NICO_KEY", value: CANARY.nicoKey }],
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: "v1",
        kind: "Event",
        metadata: { namespace: "nke-controller", name: "nvke-controller.canary" },
        involvedObject: { kind: "Deployment", namespace: "nke-controller", name: "nvke-controller" },
        reason: "BadKey",
        message: `NICo refused the key ${CANARY.nicoKey}`,
        type: "Warning",
      },
      installRecord({ release: "0.9.0", chart: "0.9.0" }, ["nke-controller", "nico-system"]),
    ],
  });
  ({ admin, home } = site);
  emulator = await site.emulator({ timing: { provisionMs: 600_000, deleteMs: 800, nodeMs: 200 }, authConfigTtlMs: 0 });
  // The site's kubeconfig: the admin's, with a second user whose token is a canary.
  const config = load(await kubectl(admin, ["config", "view", "--raw", "--flatten", "--output=yaml"])) as {
    users: Array<{ name: string; user: Record<string, string> }>;
  };
  config.users.push({ name: "canary", user: { token: CANARY.kubeToken } });
  siteKubeconfig = join(home.path, "site.kubeconfig");
  await writeFile(siteKubeconfig, dump(config), { mode: 0o600 });
  await setSite(home, "lab", emulator.url, siteKubeconfig);
  const example = (file: string) => join(repoRoot, "examples", file);
  for (const [kind, file] of [
    ["machineimage", "machineimage.yaml"],
    ["clusterrelease", "clusterrelease.yaml"],
    ["nodepoolrelease", "nodepoolrelease.yaml"],
    ["cluster", "capd-cluster.yaml"],
  ] as const) {
    const created = await home.nvkectl(["create", kind, "-f", example(file)]);
    expect(created.exitCode, created.stderr).toBe(0);
  }
}, 180_000);

afterAll(async () => {
  await site?.cleanup();
});

describe("nvkectl support-bundle", () => {
  test("every part of the site, and no canary anywhere in the archive, stdout or stderr", async () => {
    const output = join(home.path, "lab-support.tar.gz");
    const result = await home.nvkectl(["support-bundle", "--output", output], {
      env: { NODEKIT_REGISTRY_PASSWORD: CANARY.env, NVKE_TEST_API_TOKEN: CANARY.env },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`wrote ${output} (10 files)\n`);
    expect((await stat(output)).mode & 0o777).toBe(0o600);

    const { listing, text } = await openBundle(output);
    const top = listing[0]?.split("/")[0];
    expect(top).toMatch(/^nvkectl-support-lab-\d{4}-/);
    expect(listing.filter((name) => !name.endsWith("/")).map((name) => name.slice(`${top}/`.length))).toEqual(
      expect.arrayContaining([
        "index.json",
        "version.json",
        "install-record.json",
        "controller.json",
        "providers.json",
        "site-objects.json",
        "events.json",
        "cluster-api.json",
        "secrets.json",
        "config.json",
      ]),
    );

    // The controller token this very run minted, and the kubeconfig's client key.
    const cacheDir = join(home.tokenCacheDir, "lab");
    const minted = await Promise.all(
      (await readdir(cacheDir)).map(
        async (file) => JSON.parse(await readFile(join(cacheDir, file), "utf8")).state.token,
      ),
    );
    expect(minted.filter((token) => typeof token === "string" && token.length > 20)).not.toHaveLength(0);
    const kube = load(await readFile(siteKubeconfig, "utf8")) as { users: Array<{ user: Record<string, string> }> };
    const clientKeys = kube.users.flatMap((user) => {
      const data = user.user["client-key-data"];
      return data === undefined
        ? []
        : [
            data,
            ...Buffer.from(data, "base64")
              .toString("utf8")
              .split("\n")
              .filter((l) => l.length > 20),
          ];
    });
    const secrets = [...Object.values(CANARY), ...minted, ...clientKeys].filter((s): s is string => Boolean(s));
    const said = `${result.stdout}${result.stderr}`;
    for (const value of secrets) {
      expect(text.includes(value), `a secret is in the archive (${value.slice(0, 12)}…)`).toBe(false);
      expect(said.includes(value), "a secret is on stdout or stderr").toBe(false);
    }

    const index = (await entry(output, "index.json")) as { site: string; files: Array<Record<string, string>> };
    expect(index.site).toBe("lab");
    expect(index.files.filter((file) => file.error !== undefined)).toEqual([]);
    expect(index.files.find((file) => file.file === "cluster-api.json")?.note).toMatch(/not installed/);
    expect(await entry(output, "install-record.json")).toMatchObject({
      deployPath: "nico",
      release: { name: "nvke", version: "0.9.0" },
    });
    expect(await entry(output, "version.json")).toMatchObject({
      clientVersion: { nvkectl: "0.1.0" },
      installed: { release: { version: "0.9.0" } },
    });
    expect(await entry(output, "controller.json")).toMatchObject({
      url: emulator.url,
      clusters: [expect.objectContaining({ name: "capd-demo" })],
    });
    expect(await entry(output, "providers.json")).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "nico" }), expect.objectContaining({ name: "capd" })]),
    );
    expect(await entry(output, "secrets.json")).toMatchObject({
      "nico-system": [{ name: "nico-credentials", type: "Opaque", keys: ["apiKey"] }],
      "nke-controller": expect.arrayContaining([
        { name: "nvke-nico-credentials", type: "Opaque", keys: ["apiKey"] },
        { name: "other", type: "Opaque", keys: ["password", "site.kubeconfig"] },
      ]),
    });
    const objects = (await entry(output, "site-objects.json")) as Record<string, Array<Record<string, unknown>>>;
    const deployment = objects["nke-controller"]?.find((o) => o.kind === "Deployment");
    expect(JSON.stringify(deployment)).toContain('"value":"[REDACTED]"');
    const events = (await entry(output, "events.json")) as Record<string, Array<{ message: string }>>;
    expect(events["nke-controller"]?.map((e) => e.message)).toContain("NICo refused the key [REDACTED]");
    expect(await entry(output, "config.json")).toMatchObject({
      config: { sites: [{ name: "lab", url: emulator.url, kubeconfig: siteKubeconfig }] },
    });

    // Never over an existing file: exit 5, and the archive is as it was.
    const again = await home.nvkectl(["support-bundle", "--output", output]);
    expect(again.exitCode).toBe(5);
    expect(again.stderr).toContain(`${output} exists; nothing was overwritten`);
    expect((await openBundle(output)).text).toBe(text);
  });

  test("a site that does not answer: each part it could not read is an error in the index; the archive is written", async () => {
    const port = await closedPort();
    const dead = join(home.path, "dead.kubeconfig");
    const text = await readFile(siteKubeconfig, "utf8");
    await writeFile(dead, text.replace(/server: https:\/\/127\.0\.0\.1:\d+/, `server: https://127.0.0.1:${port}`), {
      mode: 0o600,
    });
    await setSite(home, "dead", `http://127.0.0.1:${port}`, dead);
    const output = join(home.path, "dead-support.tar.gz");
    const result = await home.nvkectl([
      "support-bundle",
      "--site",
      "dead",
      "--output",
      output,
      "--request-timeout",
      "5s",
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/install-record\.json: not read: .*(refused|reach)/i);
    const index = (await entry(output, "index.json")) as { files: Array<Record<string, string>> };
    const failed = index.files.filter((file) => file.error !== undefined).map((file) => file.file);
    expect(failed).toEqual(
      expect.arrayContaining(["install-record.json", "controller.json", "providers.json", "secrets.json"]),
    );
    expect(failed).not.toContain("config.json");
    const { text: archive } = await openBundle(output);
    for (const value of Object.values(CANARY)) expect(archive.includes(value)).toBe(false);
  });
});
