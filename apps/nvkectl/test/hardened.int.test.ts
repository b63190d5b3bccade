import { chmod, chown, lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunningEmulator } from "@nodekit/nvke-emulator";
import { otherUser } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { apply, type CliHome } from "./helpers.ts";
import { type SiteFixture, setSite, siteFixture } from "./site-fixture.ts";

// Issue 9 against the real thing: the built CLI, the NVKE controller emulator with auth on
// (TokenReview against the real kube-apiserver), and a token cache someone tampered with.

const AUDIENCE = "nvke-controller-hardened";
let site: SiteFixture;
let admin: string;
let emulator: RunningEmulator;
let home: CliHome;
let tokenFile: string;
const other = otherUser();

beforeAll(async () => {
  // A control plane of this file's own: its fixed namespaces and auth ConfigMap reach no other file.
  site = await siteFixture("nvkectl-hardened-", { audience: AUDIENCE });
  ({ admin, home } = site);
  emulator = await site.emulator({ timing: { provisionMs: 60_000, deleteMs: 800, nodeMs: 200 }, authConfigTtlMs: 0 });
  tokenFile = join(home.tokenCacheDir, "lab", "nke-clients_nke-client.json");
  await setSite(home, "lab", emulator.url, admin);
});

afterAll(async () => {
  await site?.cleanup();
});

const getClusters = () => home.nvkectl(["get", "clusters"]);

describe("the token cache (security 1 and 3)", () => {
  test("a world-readable token file is not used: it is removed with a warning and a fresh 0600 one minted", async () => {
    const first = await getClusters();
    expect(first).toMatchObject({ exitCode: 0, stderr: "No resources found.\n" });
    const minted = await readFile(tokenFile, "utf8");
    await chmod(tokenFile, 0o644);

    const second = await getClusters();

    expect(second.exitCode).toBe(0);
    expect(second.stderr).toContain(
      `warning: token cache not used: ${tokenFile} is readable or writable by other users (mode 0644); it was not used and has been removed`,
    );
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(tokenFile, "utf8")).not.toBe(minted);
  });

  test("a symbolic link planted in the cache hands over nothing: the victim file is untouched", async () => {
    const victim = join(home.path, "victim.txt");
    await writeFile(victim, "precious\n");
    await rm(tokenFile, { force: true });
    await symlink(victim, tokenFile);

    const result = await getClusters();

    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`warning: token cache not used: ${tokenFile} is a symbolic link; it is not used`);
    expect(result.stderr).toContain("warning: token cache not written: the token cache file");
    expect(await readFile(victim, "utf8")).toBe("precious\n");
    expect((await lstat(tokenFile)).isSymbolicLink()).toBe(true);
    await rm(tokenFile);
  });

  test.skipIf(other.skip !== undefined)(
    `a cache directory another local user made is neither read nor written (${other.skip ?? "as root, against nodekit-other"})`,
    async () => {
      const user = other.user ?? { uid: -1, gid: -1 };
      const siteDir = join(home.tokenCacheDir, "lab");
      await rm(siteDir, { recursive: true, force: true });
      await mkdir(siteDir, { mode: 0o700 });
      await chown(siteDir, user.uid, user.gid);

      const result = await getClusters();

      expect(result.exitCode).toBe(0);
      expect(result.stderr).toContain(
        `warning: token cache not used: the token cache directory ${siteDir} is not safe`,
      );
      expect(await readdir(siteDir)).toEqual([]);
      await rm(siteDir, { recursive: true });
    },
  );
});

test.skipIf(other.skip !== undefined)(
  `get kubeconfig --output-file over another user's file: refused, then replaced by root's own with --force (security 1; ${other.skip ?? "as root, against nodekit-other"})`,
  async () => {
    const user = other.user ?? { uid: -1, gid: -1 };
    const kubeconfig =
      "apiVersion: v1\nkind: Config\nclusters: []\nusers:\n- name: admin\n  user: {token: tenant-admin-token}\n";
    await apply(
      admin,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "nvke-clusters" } },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { namespace: "nvke-clusters", name: "hardened-a-kubeconfig" },
        data: { value: Buffer.from(kubeconfig).toString("base64") },
      },
    );
    const shared = join(home.path, "shared");
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const target = join(shared, "x.kubeconfig");
    await writeFile(target, "planted by another user\n", { mode: 0o644 });
    await chown(target, user.uid, user.gid);
    const args = ["get", "kubeconfig", "hardened-a", "--output-file", target];

    const refused = await home.nvkectl(args);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain(
      `error: the kubeconfig ${target} belongs to nodekit-other (uid ${user.uid}); it was not replaced`,
    );
    expect(refused.stderr).toContain("next: or pass --force to replace it with a file of your own");
    expect(await readFile(target, "utf8")).toBe("planted by another user\n");

    const forced = await home.nvkectl([...args, "--force"]);
    expect(forced.exitCode, forced.stderr).toBe(0);
    const info = await stat(target);
    expect({ uid: info.uid, mode: info.mode & 0o777 }).toEqual({ uid: process.geteuid?.(), mode: 0o600 });
    expect(await readFile(target, "utf8")).toBe(kubeconfig);

    // And a link in the file's place is never written through.
    const victim = join(home.path, "victim");
    await writeFile(victim, "precious\n");
    await rm(target);
    await symlink(victim, target);
    const linked = await home.nvkectl([...args, "--force"]);
    expect(linked.exitCode).toBe(5);
    expect(await readFile(victim, "utf8")).toBe("precious\n");
  },
);

test("a controller's status message with terminal escapes is printed escaped (security 4)", async () => {
  await emulator.seed({ clusters: 1, namePrefix: "evil" });
  const id = Object.keys(emulator.state.clusters).find((key) =>
    emulator.state.clusters[key]?.cluster.name.startsWith("evil"),
  );
  if (id === undefined) throw new Error("the emulator did not seed the cluster");
  const record = emulator.state.clusters[id];
  if (record === undefined) throw new Error("the emulator does not have the cluster");
  record.cluster.status.message = "\u001b]52;c;ZXZpbA==\u0007\u001b[2Jprovisioning\n\u202ehidden";

  for (const args of [
    ["get", "clusters", "-o", "wide"],
    ["get", "clusters", record.cluster.name, "-o", "wide"],
  ]) {
    const result = await home.nvkectl(args);
    expect(result.exitCode).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    expect(result.stdout).toContain("\\x1b]52;c;ZXZpbA==\\x07\\x1b[2Jprovisioning\\n\\u202ehidden");
  }
  const json = await home.nvkectl(["get", "clusters", record.cluster.name, "-o", "json"]);
  expect(json.stdout).not.toContain("\u001b");
  expect(json.stdout).not.toContain("\u202e");
  expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(record.cluster.status.message));
});
